package vecscan_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/internal/vecscan"
)

func naive(mat []float32, dims int, q []float32, k int, keep func(int) bool) []vecscan.Hit {
	var hs []vecscan.Hit
	for r := 0; r < len(mat)/dims; r++ {
		if keep != nil && !keep(r) {
			continue
		}
		var s float32
		for i := range q {
			s += q[i] * mat[r*dims+i]
		}
		hs = append(hs, vecscan.Hit{Row: r, Score: s})
	}
	slices.SortFunc(hs, vecscan.Compare)
	return hs[:min(k, len(hs))]
}

func TestScanMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name    string
		n, dims int
		k       int
		keep    func(int) bool
	}{
		{"small", 100, 8, 10, nil},
		{"k above n", 5, 8, 10, nil},
		{"filtered", 1000, 16, 7, func(r int) bool { return r%3 == 0 }},
		{"parallel", 3 * vecscan.ParallelAbove, 12, 10, nil},
		{"parallel filtered", 3 * vecscan.ParallelAbove, 12, 10, func(r int) bool { return r%5 == 1 }},
		{"nothing kept", 500, 4, 3, func(int) bool { return false }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mat := make([]float32, tc.n*tc.dims)
			for i := range mat {
				// Coarse values, so that exact ties occur and their order
				// (lower row first) is checked too.
				mat[i] = float32(rng.IntN(5) - 2)
			}
			q := make([]float32, tc.dims)
			for i := range q {
				q[i] = float32(rng.IntN(3) - 1)
			}
			got, err := vecscan.Scan(mat, tc.dims, q, tc.k, tc.keep)
			if err != nil {
				t.Fatal(err)
			}
			want := naive(mat, tc.dims, q, tc.k, tc.keep)
			if len(got) != len(want) {
				t.Fatalf("got %d hits, want %d", len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("hit %d: got %+v, want %+v", i, got[i], want[i])
				}
			}
		})
	}
}

func TestScanBadInput(t *testing.T) {
	mat := make([]float32, 40)
	for _, c := range []struct {
		dims, k int
		q       []float32
	}{{0, 1, nil}, {4, 0, make([]float32, 4)}, {4, 1, make([]float32, 3)}} {
		if hits, err := vecscan.Scan(mat, c.dims, c.q, c.k, nil); hits != nil || err != nil {
			t.Errorf("Scan(dims %d, k %d, len(q) %d) = %v, %v; want nothing", c.dims, c.k, len(c.q), hits, err)
		}
	}
	if vecscan.Dot([]float32{1, 2}, []float32{1}) != 0 || vecscan.Dot(nil, nil) != 0 {
		t.Error("Dot of unequal or empty vectors is not 0")
	}
	if d := vecscan.Dot([]float32{1, 2, 3}, []float32{4, 5, 6}); d != 32 {
		t.Errorf("Dot = %v, want 32", d)
	}
}

// TestScanRecoversPanics: a panic in a scanning goroutine is an error,
// not a crash.
func TestScanRecoversPanics(t *testing.T) {
	for _, n := range []int{10, 3 * vecscan.ParallelAbove} {
		mat := make([]float32, n*2)
		_, err := vecscan.Scan(mat, 2, []float32{1, 1}, 3, func(r int) bool {
			if r == n-1 {
				panic("boom")
			}
			return true
		})
		if !errors.Is(err, vecscan.ErrFault) {
			t.Errorf("n=%d: %v, want ErrFault", n, err)
		}
	}
}

// TestHeapKeepsBest compares the heap with a full sort, for sizes around
// its cut (2k+16 hits), with many equal scores (the ties go to the lower
// row) and rows pushed in any order.
func TestHeapKeepsBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{1, 2, 3, 10, 64, 100, 400} {
		for _, n := range []int{0, 1, k - 1, k, 2*k + 15, 2*k + 16, 2*k + 17, 5*k + 40, 20000} {
			for _, levels := range []int{3, 1000, 1 << 30} {
				all := make([]vecscan.Hit, max(n, 0))
				for i := range all {
					all[i] = vecscan.Hit{Row: i, Score: float32(rng.IntN(levels))}
				}
				got, want := heapAndSort(rng, k, all)
				if !slices.Equal(got, want) {
					t.Fatalf("k %d n %d levels %d: got %v, want %v", k, n, levels, got[:min(5, len(got))], want[:min(5, len(want))])
				}
			}
		}
	}
}

// TestHeapNaN: a NaN score ranks below every number and ties with
// another NaN (the lower row first), as Compare orders them, whether the
// NaNs come before the heap's first cut or after.
func TestHeapNaN(t *testing.T) {
	nan := float32(math.NaN())
	rng := rand.New(rand.NewPCG(9, 10))
	for _, k := range []int{1, 3, 10} {
		for _, n := range []int{k, 2*k + 16, 200} {
			for _, share := range []int{1, 2, 4} { // one score in share is NaN
				all := make([]vecscan.Hit, n)
				for i := range all {
					s := float32(rng.IntN(5))
					if rng.IntN(share) == 0 {
						s = nan
					}
					all[i] = vecscan.Hit{Row: i, Score: s}
				}
				got, want := heapAndSort(rng, k, all)
				same := len(got) == len(want)
				for i := 0; same && i < len(got); i++ {
					same = got[i].Row == want[i].Row
				}
				if !same {
					t.Fatalf("k %d n %d share %d: got %v, want %v", k, n, share, got, want)
				}
			}
		}
	}
}

// BenchmarkHeapScan is the selection of an int8 scan's part: the best
// 200 of 41,367 scores in row order, pushed as scan loops push them
// (only the rows that reach the floor).
func BenchmarkHeapScan(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	scores := make([]float32, 41_367)
	for i := range scores {
		scores[i] = float32(rng.NormFloat64())
	}
	for b.Loop() {
		h := vecscan.NewHeap(200)
		floor := h.Floor()
		for r, s := range scores {
			if s >= floor {
				h.Push(r, s)
				floor = h.Floor()
			}
		}
		_ = h.Sorted()
	}
}

// heapAndSort shuffles all and returns the best k of a Heap they were
// pushed into, and the first k of all sorted by Compare.
func heapAndSort(rng *rand.Rand, k int, all []vecscan.Hit) (got, want []vecscan.Hit) {
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	h := vecscan.NewHeap(k)
	for _, x := range all {
		h.Push(x.Row, x.Score)
	}
	want = slices.Clone(all)
	slices.SortFunc(want, vecscan.Compare)
	return h.Sorted(), want[:min(k, len(want))]
}

// TestSortAsCompare checks that Sort leaves the order slices.SortFunc
// with Compare leaves: scores with many ties, NaN, both zeros and
// infinities, negative rows and rows given twice.
func TestSortAsCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	odd := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)), float32(math.Inf(-1))}
	cases := []struct {
		name            string
		levels          int  // distinct scores: few make ties
		odd, neg, twice bool // odd scores, negative rows, a row twice
	}{
		{"distinct", 1 << 24, false, false, false},
		{"ties", 4, false, false, false},
		{"odd scores", 6, true, false, false},
		{"negative rows", 4, false, true, false},
		{"a row twice", 4, false, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for trial := range 1000 {
				hits := make([]vecscan.Hit, rng.IntN(300))
				for i := range hits {
					hits[i] = vecscan.Hit{Row: i, Score: float32(rng.IntN(tc.levels)) / 3}
					if tc.odd && rng.IntN(8) == 0 {
						hits[i].Score = odd[rng.IntN(len(odd))]
					}
					if tc.neg {
						hits[i].Row -= len(hits) / 2
					}
				}
				rng.Shuffle(len(hits), func(i, j int) { hits[i], hits[j] = hits[j], hits[i] })
				if tc.twice && len(hits) > 1 {
					hits[0].Row = hits[1].Row
				}
				want := slices.Clone(hits)
				slices.SortFunc(want, vecscan.Compare)
				vecscan.Sort(hits)
				for i := range hits {
					if hits[i].Row != want[i].Row || math.Float32bits(hits[i].Score) != math.Float32bits(want[i].Score) {
						t.Fatalf("trial %d: place %d holds %+v, Compare's order %+v", trial, i, hits[i], want[i])
					}
				}
			}
		})
	}
}

// TestScanFuncSharedFloor: the parts of a scan share the best of their
// bars: a part that starts after another has cut skips the rows below
// that part's bar (Floor), yet keeps those at it, since a lower row wins
// a tie, and the result is the k best of all rows, as one heap finds
// them.
func TestScanFuncSharedFloor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const k = 20
	n := 2*vecscan.ParallelAbove + 2
	if vecscan.Parts(n) != 2 {
		t.Fatalf("%d parts, want 2", vecscan.Parts(n))
	}
	score := func(r int) float32 {
		switch {
		case r >= n/2:
			return 10 // the second part: all at 10, its bar 10 once it cuts
		case r%1000 == 7:
			return 10 // ties at that bar in the first part: lower rows, so among the best
		case r == 5:
			return float32(math.NaN())
		}
		return 9
	}
	second := make(chan struct{})
	skipped := 0
	got, err := vecscan.ScanFunc(n, k, nil, func(lo, hi int, h *vecscan.Heap) {
		if lo == 0 {
			<-second // the first part scans once the second has cut
		} else {
			defer close(second)
		}
		floor := h.Floor()
		for r := lo; r < hi; r++ {
			s := score(r)
			if s < floor {
				if lo == 0 {
					skipped++
				}
				continue
			}
			h.Push(r, s)
			floor = h.Floor()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	var all []vecscan.Hit
	for r := range n {
		all = append(all, vecscan.Hit{Row: r, Score: score(r)})
	}
	slices.SortFunc(all, vecscan.Compare)
	if want := all[:k]; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if skipped < n/2-100 {
		t.Fatalf("the first part skipped %d of its %d rows below the second's bar", skipped, n/2)
	}
}
