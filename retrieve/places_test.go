package retrieve_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hmo-dev/hmo/retrieve"
)

// The stages' table of ids to places answers as a map[uint64]int would,
// put after put: ids repeated (a later put wins), ids that collide in a
// small table, sequential ids (records'), 0 and the largest id, tables
// taken for fewer ids than they get (they grow), and tables taken again
// after one was dropped (they start empty).
func TestPlacesAsMap(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for round := range 300 {
		hint := []int{0, 1, 10, 100, 1000}[round%5]
		n := r.IntN(600)
		var id func() uint64
		switch round % 4 {
		case 0:
			id = func() uint64 { return uint64(r.IntN(2 * max(n, 1))) } // repeats
		case 1:
			base := r.Uint64N(1 << 40)
			id = func() uint64 { return base + uint64(r.IntN(n+1)) } // sequential
		case 2:
			id = func() uint64 { return []uint64{0, math.MaxUint64, 1, 1 << 63}[r.IntN(4)] }
		default:
			id = r.Uint64
		}
		tab := retrieve.TakePlaceTable(hint)
		want := map[uint64]int{}
		var seen []uint64
		for i := range n {
			k := id()
			if r.IntN(3) == 0 && len(seen) > 0 {
				k = seen[r.IntN(len(seen))]
			}
			tab.Put(k, i)
			want[k] = i
			seen = append(seen, k)
			for range 2 {
				q := id()
				if r.IntN(2) == 0 {
					q = seen[r.IntN(len(seen))]
				}
				got, ok := tab.Get(q)
				w, wok := want[q]
				if got != w || ok != wok {
					t.Fatalf("round %d, after %d puts: Get(%d) = %d, %t; the map has %d, %t", round, i+1, q, got, ok, w, wok)
				}
			}
		}
		for k, w := range want {
			if got, ok := tab.Get(k); !ok || got != w {
				t.Fatalf("round %d: Get(%d) = %d, %t, want %d", round, k, got, ok, w)
			}
		}
		tab.Drop()
		again := retrieve.TakePlaceTable(hint)
		for k := range want {
			if _, ok := again.Get(k); ok {
				t.Fatalf("round %d: a table taken again holds %d", round, k)
			}
		}
		again.Drop()
	}
}
