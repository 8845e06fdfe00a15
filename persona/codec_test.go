package persona_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/persona"
)

// trained returns a persona after n random observations of 16-d vectors.
func trained(t testing.TB, o *persona.Options, n int, seed uint64) *persona.Persona {
	t.Helper()
	p := newPersona(t, o)
	rng := rand.New(rand.NewPCG(seed, 7))
	words := []string{"pottery", "hiking", "Berlin", "sister", "wedding", "peanuts", "allergy", "marathon", "python", "garden"}
	for i := range n {
		v := make([]float32, 16)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		v[0] += 2 // a common direction, so the persona settles
		text := words[rng.IntN(len(words))] + " and " + words[rng.IntN(len(words))] + " today"
		observe(t, p, v, float64(rng.IntN(11)), text, t0.Add(time.Duration(i)*time.Hour))
	}
	return p
}

func state(p *persona.Persona) []any {
	return []any{p.Vector(), p.Drift(), p.Profile(), p.Firings(), p.Updates(), p.AnchorTime(), p.History(), p.Dims()}
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 5, 300} {
		p := trained(t, nil, n, uint64(n))
		data, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		q := newPersona(t, nil)
		if err := q.UnmarshalBinary(data); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if !reflect.DeepEqual(state(p), state(q)) {
			t.Fatalf("n=%d: state differs after round trip\n got %v\nwant %v", n, state(q), state(p))
		}
		again, _ := q.MarshalBinary()
		if !bytes.Equal(data, again) {
			t.Fatalf("n=%d: re-encoding differs", n)
		}
		// Both continue identically: the state is complete.
		v := rot(16, 1)
		d1, f1 := observe(t, p, v, 9, "pottery forever", t0)
		d2, f2 := observe(t, q, v, 9, "pottery forever", t0)
		if d1 != d2 || f1 != f2 || !reflect.DeepEqual(state(p), state(q)) {
			t.Fatalf("n=%d: restored persona diverges", n)
		}
	}
}

// reseal recomputes the checksum of a modified encoding.
func reseal(b []byte) []byte {
	body := b[:len(b)-4]
	return binary.LittleEndian.AppendUint32(bytes.Clone(body), crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
}

func TestUnmarshalRejects(t *testing.T) {
	good, _ := trained(t, nil, 20, 3).MarshalBinary()
	flip := func(i int) []byte { b := bytes.Clone(good); b[i] ^= 0x40; return b }
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, persona.ErrCorrupt},
		{"short", []byte("HMOP"), persona.ErrCorrupt},
		{"bad magic", append([]byte("XMOP"), good[4:]...), persona.ErrCorrupt},
		{"future version", reseal(append([]byte("HMOP\x02"), good[5:]...)), persona.ErrVersion},
		{"flipped byte", flip(len(good) / 2), persona.ErrCorrupt},
		{"flipped checksum", flip(len(good) - 1), persona.ErrCorrupt},
		{"truncated", reseal(good[:len(good)-20]), persona.ErrCorrupt},
		{"trailing bytes", reseal(append(bytes.Clone(good[:len(good)-4]), 0, 0, 0, 0, 0)), persona.ErrCorrupt},
		{"huge dims", reseal(append(append([]byte("HMOP\x01"), 0xff, 0xff, 0xff, 0x7f), good[9:]...)), persona.ErrCorrupt},
		{"non-unit vector", reseal(func() []byte { b := bytes.Clone(good); b[33+6] ^= 0x10; return b /* p[0], a high mantissa bit */ }()), persona.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := trained(t, nil, 5, 9)
			before, _ := p.MarshalBinary()
			if err := p.UnmarshalBinary(tt.data); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if after, _ := p.MarshalBinary(); !bytes.Equal(before, after) {
				t.Error("a failed UnmarshalBinary changed the persona")
			}
		})
	}
	p := newPersona(t, &persona.Options{Dims: 8})
	if err := p.UnmarshalBinary(good); !errors.Is(err, persona.ErrDims) {
		t.Errorf("16-d state into Dims 8: err = %v, want ErrDims", err)
	}
}

// TestUnmarshalCutsToOptions: a state with more than the options allow is
// cut to the best entries.
func TestUnmarshalCutsToOptions(t *testing.T) {
	big := trained(t, &persona.Options{GateOff: true}, 50, 4)
	data, _ := big.MarshalBinary()
	small := newPersona(t, &persona.Options{MaxStatements: 1, MaxHistory: 2, MaxTerms: 3})
	if err := small.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	bp, sp := big.Profile(), small.Profile()
	if !reflect.DeepEqual(sp.Terms, bp.Terms[:3]) || !reflect.DeepEqual(sp.Statements, bp.Statements[:1]) {
		t.Errorf("profile not cut to the best: %+v", sp)
	}
	if h := small.History(); len(h) != 2 || !reflect.DeepEqual(h, big.History()[len(big.History())-2:]) {
		t.Errorf("history not cut to the newest 2: %+v", h)
	}
}
