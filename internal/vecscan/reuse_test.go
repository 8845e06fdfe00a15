package vecscan_test

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/hmo-dev/hmo/internal/vecscan"
)

// TestScanResultsKeptAcrossScans: ScanFunc reuses its parts' buffers
// from one scan to the next; the hits a caller keeps do not change when
// later scans run, one after another or at once (one part and several),
// and every scan finds what the naive scan finds.
func TestScanResultsKeptAcrossScans(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const dims = 8
	for _, n := range []int{500, 3 * vecscan.ParallelAbove} {
		mat := make([]float32, n*dims)
		for i := range mat {
			mat[i] = float32(rng.IntN(7) - 3)
		}
		qs := make([][]float32, 24)
		for i := range qs {
			qs[i] = make([]float32, dims)
			for j := range qs[i] {
				qs[i][j] = float32(rng.IntN(5) - 2)
			}
		}
		k := func(i int) int { return 3 + i%4*15 } // 3 to 48: buffers of several sizes
		kept := make([][]vecscan.Hit, len(qs))
		for i, q := range qs {
			got, err := vecscan.Scan(mat, dims, q, k(i), nil)
			if err != nil {
				t.Fatal(err)
			}
			kept[i] = got
		}
		var wg sync.WaitGroup
		for g := range 3 {
			wg.Go(func() {
				for i := g; i < len(qs); i += 3 {
					if _, err := vecscan.Scan(mat, dims, qs[i], k(i), nil); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		for i, q := range qs {
			if want := naive(mat, dims, q, k(i), nil); !slices.Equal(kept[i], want) {
				t.Fatalf("n %d query %d: the hits kept are %v after later scans, want %v", n, i, kept[i], want)
			}
		}
	}
}

// TestHeapReset: a heap reset to another k after use keeps the k best of
// what is pushed after, as a new heap does, and AppendSorted appends them
// to what dst holds, best first, as Sorted returns them.
func TestHeapReset(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	h := vecscan.NewHeap(1)
	for _, k := range []int{50, 3, 1, 200, 10, 0} {
		all := make([]vecscan.Hit, 700)
		for i := range all {
			all[i] = vecscan.Hit{Row: i, Score: float32(rng.IntN(40))}
		}
		h.Reset(k)
		fresh := vecscan.NewHeap(k)
		for _, x := range all {
			h.Push(x.Row, x.Score)
			fresh.Push(x.Row, x.Score)
		}
		head := []vecscan.Hit{{Row: -1, Score: 99}}
		got := h.AppendSorted(slices.Clone(head))
		want := append(slices.Clone(head), fresh.Sorted()...)
		if !slices.Equal(got, want) {
			t.Fatalf("k %d: got %v, want %v", k, got[:min(6, len(got))], want[:min(6, len(want))])
		}
		if len(got) != 1+min(k, len(all)) {
			t.Fatalf("k %d: %d hits kept", k, len(got)-1)
		}
	}
}
