package retrieve_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/hmo-dev/hmo/retrieve"
)

// selectBest must leave the candidates in the order sort.Slice left them
// with its "less" (a higher score, then a higher id), ties and NaN
// scores included, at sizes from 0 to 600.
func TestSelectBestOrderAsSortSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	levels := []float64{0, 0.25, 0.5, 1, math.NaN(), math.Inf(1)}
	for _, n := range []int{0, 1, 2, 3, 12, 13, 100, 255, 256, 257, 600} {
		for round := range 20 {
			ids := make([]uint64, n)
			scores := make([]float64, n)
			for i := range n {
				ids[i] = uint64(rng.IntN(n/2 + 1)) // repeated ids: ties that only the algorithm orders
				if round%2 == 0 {
					scores[i] = levels[rng.IntN(len(levels))]
				} else {
					scores[i] = rng.Float64()
				}
			}
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			sort.Slice(want, func(i, j int) bool {
				a, b := want[i], want[j]
				if scores[a] != scores[b] {
					return scores[a] > scores[b]
				}
				return ids[a] > ids[b]
			})
			if got := retrieve.SelectBest(ids, scores); !slices.Equal(got, want) {
				t.Fatalf("n=%d round %d: order %v, sort.Slice's %v", n, round, got, want)
			}
		}
	}
}
