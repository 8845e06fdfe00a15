package wvpack_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/hmo-dev/hmo/internal/wvpack"
)

// table builds a fake table: a head of headLen bytes, dims×count component
// bytes drawn by gen, and a 4-byte trailer.
func table(headLen, dims, count int, gen func(i int) byte) []byte {
	b := make([]byte, 0, headLen+dims*count+4)
	for i := range headLen {
		b = append(b, byte(i*7))
	}
	for i := range dims * count {
		b = append(b, gen(i))
	}
	return append(b, 0xde, 0xad, 0xbe, 0xef)
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gauss := func(int) byte { return byte(int8(max(-127, min(127, rng.NormFloat64()*30)))) }
	uniform := func(int) byte { return byte(rng.IntN(256)) }
	for _, tc := range []struct {
		name            string
		head, dims, cnt int
		gen             func(int) byte
	}{
		{"gaussian", 1000, 100, 5000, gauss},
		{"uniform (raw blocks)", 10, 8, 3000, uniform},
		{"constant (repeat blocks)", 0, 3, 1000, func(int) byte { return 42 }},
		{"planes longer than a block", 5, 2, 300000, gauss},
		{"one word", 1, 1, 1, gauss},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := table(tc.head, tc.dims, tc.cnt, tc.gen)
			packed, err := wvpack.Pack(raw, wvpack.Layout{Dims: tc.dims, Count: tc.cnt})
			if err != nil {
				t.Fatal(err)
			}
			got, err := wvpack.Unpack(packed, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, raw) {
				t.Fatalf("round trip changed the table (%d -> %d bytes)", len(raw), len(got))
			}
			again, _ := wvpack.Pack(raw, wvpack.Layout{Dims: tc.dims, Count: tc.cnt})
			if !bytes.Equal(again, packed) {
				t.Fatal("packing twice gave different bytes")
			}
		})
	}
}

func TestPackRejectsBadLayout(t *testing.T) {
	if _, err := wvpack.Pack(make([]byte, 10), wvpack.Layout{Dims: 4, Count: 4}); err == nil {
		t.Fatal("a layout larger than the table was accepted")
	}
}

func TestUnpackRejectsDamage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	raw := table(100, 10, 2000, func(int) byte { return byte(int8(rng.NormFloat64() * 20)) })
	packed, err := wvpack.Pack(raw, wvpack.Layout{Dims: 10, Count: 2000})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		max  int
	}{
		{"no magic", raw, 1 << 30},
		{"truncated", packed[:len(packed)-7], 1 << 30},
		{"trailing bytes", append(bytes.Clone(packed), 0), 1 << 30},
		{"larger than the limit", packed, 1000},
		{"empty", nil, 1 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := wvpack.Unpack(tc.b, tc.max); !errors.Is(err, wvpack.ErrPacked) {
				t.Fatalf("err = %v, want ErrPacked", err)
			}
		})
	}
}

func FuzzUnpack(f *testing.F) {
	raw := table(20, 3, 50, func(i int) byte { return byte(i % 17) })
	packed, _ := wvpack.Pack(raw, wvpack.Layout{Dims: 3, Count: 50})
	f.Add(packed)
	f.Add([]byte(wvpack.Magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := wvpack.Unpack(b, 1<<20)
		if err == nil && len(out) > 1<<20 {
			t.Fatalf("%d bytes beyond the 1 MiB limit", len(out))
		}
	})
}
