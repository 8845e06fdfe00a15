package vecscan_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/internal/vecscan"
)

// TestSortIsSortFunc checks Sort, and its heapsort fallback, against
// slices.SortFunc with Compare, row for row: random scores with many
// ties, NaNs and infinities, rows in random, ascending and descending
// order, all scores equal, runs already sorted or reversed, lengths 0
// to 1,000.
func TestSortIsSortFunc(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	shapes := map[string]func(i, n int) vecscan.Hit{
		"random": func(i, n int) vecscan.Hit {
			return vecscan.Hit{Row: rng.IntN(1 << 40), Score: float32(rng.NormFloat64())}
		},
		"ties": func(i, n int) vecscan.Hit { return vecscan.Hit{Row: i, Score: float32(rng.IntN(4))} },
		"odd scores": func(i, n int) vecscan.Hit {
			s := []float32{nan, inf, -inf, 0, 1, -1}[rng.IntN(6)]
			return vecscan.Hit{Row: n - i, Score: s}
		},
		"all equal":  func(i, n int) vecscan.Hit { return vecscan.Hit{Row: rng.IntN(1 << 20), Score: 0.5} },
		"best first": func(i, n int) vecscan.Hit { return vecscan.Hit{Row: i, Score: float32(n - i)} },
		"worst first": func(i, n int) vecscan.Hit {
			return vecscan.Hit{Row: i, Score: float32(i)}
		},
	}
	for name, shape := range shapes {
		for _, n := range []int{0, 1, 2, 3, 12, 13, 50, 200, 401, 1000} {
			hits := make([]vecscan.Hit, n)
			seen := map[int]bool{}
			for i := range hits {
				h := shape(i, n)
				for seen[h.Row] { // distinct rows, as a scan's are
					h.Row++
				}
				seen[h.Row] = true
				hits[i] = h
			}
			want := slices.Clone(hits)
			slices.SortFunc(want, vecscan.Compare)
			for sort, f := range map[string]func([]vecscan.Hit){"Sort": vecscan.Sort, "heapsort": vecscan.HeapSort} {
				got := slices.Clone(hits)
				f(got)
				for i := range got {
					if got[i].Row != want[i].Row {
						t.Fatalf("%s, %s, n %d: place %d holds row %d, want %d", sort, name, n, i, got[i].Row, want[i].Row)
					}
				}
			}
		}
	}
}
