package event_test

import (
	"reflect"
	"testing"

	"github.com/hmo-dev/hmo/hymem/event"
)

func TestSummarise(t *testing.T) {
	a, b := []float32{1, 0}, []float32{0, 1}
	texts := []string{"Wow! I adopted a cat named Miso.", "Cool!", "The cat sleeps on my desk all day.", "I bought a new bike."}
	cases := []struct {
		name  string
		vecs  [][]float32
		runes int
		want  string
	}{
		// Turns 0 and 2 are nearest the centroid (three of four point
		// at a); both fit; the order is the turns'.
		{"central facts in turn order", [][]float32{a, a, a, b}, 80, "I adopted a cat named Miso. The cat sleeps on my desk all day."},
		// Only the nearest fits: the next one stops the summary.
		{"budget", [][]float32{a, a, a, b}, 40, "I adopted a cat named Miso."},
		// All are as near (ties: the first); it is longer than the budget: it
		// is cut.
		{"cut", [][]float32{a, b, a, b}, 10, "I adopted…"},
		{"no turns", nil, 80, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asked := 0
			got := event.Summarise(tc.vecs, func(i int) string { asked++; return texts[i] }, tc.runes)
			if got != tc.want {
				t.Errorf("Summarise = %q, want %q", got, tc.want)
			}
			if asked > len(tc.vecs) {
				t.Errorf("asked %d texts for %d turns", asked, len(tc.vecs))
			}
		})
	}
}

func TestCodec(t *testing.T) {
	u := &event.Unit{Scope: "alice", Turns: []uint64{3, 4, 900}, Summary: "I adopted a cat."}
	got, err := event.Decode(event.Encode(u))
	if err != nil || !reflect.DeepEqual(got, u) {
		t.Errorf("round trip = %+v, %v; want %+v", got, err, u)
	}
}

// FuzzDecode: bytes Encode did not write give an error, never a panic.
func FuzzDecode(f *testing.F) {
	f.Add(event.Encode(&event.Unit{Scope: "s", Turns: []uint64{1, 2}, Summary: "x"}))
	f.Add([]byte{1, 200})
	f.Fuzz(func(t *testing.T, b []byte) {
		if u, err := event.Decode(b); err == nil {
			if _, err := event.Decode(event.Encode(u)); err != nil {
				t.Fatalf("re-encoding %+v: %v", u, err)
			}
		}
	})
}
