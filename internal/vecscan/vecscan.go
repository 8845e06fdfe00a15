// Package vecscan is the exact vector scan every similarity in hmo goes
// through: SIMD dot products (github.com/viterin/vek/vek32) over a
// contiguous row-major matrix, split over the available cores, keeping the
// k best rows that pass a filter. It holds no state and is safe for
// concurrent use.
package vecscan

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/viterin/vek/vek32"

	"github.com/hmo-dev/hmo/internal/keysort"
)

// ParallelAbove is the row count above which Scan splits the rows over
// GOMAXPROCS goroutines; below it, one goroutine is faster than the
// hand-off (measured: 100-d rows cost about 10 ns each with AVX2).
const ParallelAbove = 16384

// ErrFault is returned when a scan faults: the rows live in a mapped file
// that shrank or is unreadable, or a keep function panicked.
var ErrFault = errors.New("vecscan: fault while scanning")

// Hit is one scanned row and its dot product with the query.
type Hit struct {
	Row   int
	Score float32
}

// Dot is the inner product of a and b, with SIMD where the CPU has it. It
// returns 0 for empty or unequal-length vectors instead of panicking.
func Dot(a, b []float32) float32 {
	if len(a) == 0 || len(a) != len(b) {
		return 0
	}
	return vek32.Dot(a, b)
}

// Scan returns the k rows of mat (rows of dims floats, len(mat)/dims of
// them) with the highest dot product with q, best first; ties go to the
// lower row. keep, if not nil, is asked about each row before it is
// scored and must be safe for concurrent calls. q must have dims floats.
func Scan(mat []float32, dims int, q []float32, k int, keep func(row int) bool) ([]Hit, error) {
	if dims <= 0 || k <= 0 || len(q) != dims {
		return nil, nil
	}
	n := len(mat) / dims
	return ScanFunc(n, k, keep, func(lo, hi int, h *Heap) {
		floor := h.Floor()
		for r := lo; r < hi; r++ {
			if keep != nil && !keep(r) {
				continue
			}
			if s := vek32.Dot(q, mat[r*dims:(r+1)*dims]); s >= floor {
				h.Push(r, s)
				floor = h.Floor()
			}
		}
	})
}

// ScanFunc runs scan over [0, n) in parts, one goroutine per part when n
// is above ParallelAbove, each part pushing rows into its own heap of k,
// and merges the parts' heaps. It is the skeleton of Scan for row layouts
// other than a float32 matrix (quantised rows). A panic or a memory fault
// (a mapped file cut short under the scan) in any part is returned as an
// error wrapping ErrFault.
func ScanFunc(n, k int, keep func(int) bool, scan func(lo, hi int, h *Heap)) ([]Hit, error) {
	if n <= 0 || k <= 0 {
		return nil, nil
	}
	parts := Parts(n)
	heaps := make([]Heap, parts)
	errs := make([]error, parts)
	// The parts' buffers are kept for the next scan (hitBufs): what
	// ScanFunc returns is a copy of their best. A part holds at most
	// 2k+16 hits (Push cuts there) and no more than its rows.
	for p := range heaps {
		heaps[p].hits = takeHits(min(2*k+16, n/parts+1))
	}
	defer func() {
		for p := range heaps {
			if b := heaps[p].hits[:0]; cap(b) <= maxKeptHits {
				hitBufs.Put(&b)
			}
		}
	}()
	if parts == 1 {
		heaps[0].k = k
		errs[0] = guard(func() { scan(0, n, &heaps[0]) })
	} else {
		// The parts share the best of their bars (Floor).
		var bar atomic.Uint32
		bar.Store(math.Float32bits(float32(math.Inf(-1))))
		var wg sync.WaitGroup
		for p := range parts {
			heaps[p].k, heaps[p].shared = k, &bar
			lo, hi := p*n/parts, (p+1)*n/parts
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[p] = guard(func() { scan(lo, hi, &heaps[p]) })
			}()
		}
		wg.Wait()
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	all := make([]Hit, 0, parts*k)
	for p := range heaps {
		all = append(all, heaps[p].best()...)
	}
	if len(all) > k {
		selectBest(all, k)
		all = all[:k]
	}
	Sort(all)
	return all, nil
}

// Parts is the number of parts ScanFunc splits n rows into, each a
// contiguous range of about n/Parts(n) rows scanned on its own goroutine
// into its own heap: 1 up to ParallelAbove rows, else up to GOMAXPROCS.
// A caller that can order its rows (nearest lists first) uses it to give
// every part a good start.
func Parts(n int) int {
	if n <= ParallelAbove {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), n/(ParallelAbove/2)))
}

// guard runs fn with faults on mapped memory turned into panics, and
// panics turned into an error.
func guard(fn func()) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrFault, r)
		}
	}()
	fn()
	return nil
}

// Compare orders hits best first: higher score, then lower row.
func Compare(a, b Hit) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(a.Row, b.Row)
}

// Sort orders hits best first (Compare). It sorts keys (internal/keysort:
// the score, then the row): hits of distinct rows have distinct keys, so
// the order is Compare's, the one any sort by it leaves. Hits with a NaN
// score, or two of one row and one score, which the keys do not order,
// are sorted by Compare itself.
func Sort(hits []Hit) {
	ok := keysort.SortDescending(hits, func(i int) (float64, uint64) {
		// The sign bit flipped: signed rows ascend as unsigned keys.
		return float64(hits[i].Score), uint64(hits[i].Row) ^ 1<<63
	})
	if !ok {
		slices.SortFunc(hits, Compare)
	}
}

// Heap keeps the k best hits pushed into it. The zero value keeps none;
// NewHeap sets k.
//
// It is a selection buffer rather than a binary heap: hits better than
// the k-th best known are appended, and when 2k have gathered a
// quickselect keeps the k best and raises the bar. A hit costs O(1)
// amortised instead of O(log k), which matters when k is in the hundreds
// (a k-100 search that rescores 400 candidates).
type Heap struct {
	k    int
	hits []Hit
	bar  Hit  // with full: the k-th best kept at the last cut
	full bool // a cut has happened: only hits better than bar enter

	// shared, when not nil, holds the float32 bits of the highest bar
	// of the heaps of one scan's parts (ScanFunc): each of them holds
	// k rows scoring at least its bar, so no row scoring below the
	// highest is among the scan's k best.
	shared *atomic.Uint32
}

// NewHeap returns a heap keeping the k best hits.
func NewHeap(k int) *Heap { return &Heap{k: k} }

// Floor is the score below which a hit cannot be among the k best: the
// score below which Push refuses one (-Inf until the heap has cut), or,
// for a part of ScanFunc's scan, the highest bar of the scan's parts
// when that is higher. A scan loop checks it inline and pushes only the
// rows that reach it, then reads it again. A hit at the floor may still
// be among the best (a lower row wins a tie) and is pushed.
func (h *Heap) Floor() float32 {
	f := float32(math.Inf(-1))
	if h.full {
		f = h.bar.Score
	}
	if h.shared != nil {
		if s := math.Float32frombits(h.shared.Load()); s > f {
			f = s
		}
	}
	return f
}

// Push offers a row with its score.
func (h *Heap) Push(row int, score float32) {
	if h.full && score < h.bar.Score {
		return // the common case of a long scan: below the bar
	}
	if h.k <= 0 {
		return
	}
	hit := Hit{row, score}
	if h.full && !better(hit, h.bar) {
		return
	}
	if h.hits == nil {
		h.hits = make([]Hit, 0, 2*h.k+16)
	}
	h.hits = append(h.hits, hit)
	if len(h.hits) >= 2*h.k+16 {
		h.cut()
	}
}

// cut keeps the k best hits and sets the bar to the worst of them.
func (h *Heap) cut() {
	selectBest(h.hits, h.k)
	h.hits = h.hits[:h.k]
	h.bar, h.full = h.hits[h.k-1], true
	if h.shared == nil {
		return
	}
	// Raise the shared bar to this one (a NaN bar raises nothing).
	for {
		old := h.shared.Load()
		if !(h.bar.Score > math.Float32frombits(old)) || h.shared.CompareAndSwap(old, math.Float32bits(h.bar.Score)) {
			return
		}
	}
}

// best returns the kept hits, at most k, in no order.
func (h *Heap) best() []Hit {
	if len(h.hits) > h.k {
		h.cut()
	}
	return h.hits
}

// Reset empties h and sets it to keep the k best, keeping its buffer's
// room for the next pushes.
func (h *Heap) Reset(k int) {
	*h = Heap{k: k, hits: h.hits[:0]}
}

// AppendSorted appends the kept hits to dst, best first, and returns it.
func (h *Heap) AppendSorted(dst []Hit) []Hit {
	n := len(dst)
	dst = append(dst, h.best()...)
	Sort(dst[n:])
	return dst
}

// Sorted returns the kept hits, best first.
func (h *Heap) Sorted() []Hit {
	out := slices.Clone(h.best())
	Sort(out)
	return out
}

// better reports whether a ranks above b, as Compare(a, b) < 0 does
// (a NaN score below every other, equal to another NaN), with the
// common case of two different numbers decided by one comparison.
func better(a, b Hit) bool {
	switch {
	case a.Score > b.Score:
		return true
	case a.Score < b.Score:
		return false
	}
	if an, bn := a.Score != a.Score, b.Score != b.Score; an != bn {
		return bn // exactly one is NaN: the other ranks above it
	}
	return a.Row < b.Row
}

// selectBest reorders hits so that hits[:k] are the k best, with the
// worst of them at k-1 (quickselect; hits are distinct rows, so Compare
// is a strict order). 0 < k <= len(hits).
func selectBest(hits []Hit, k int) {
	lo, hi := 0, len(hits)-1
	for lo < hi {
		// Median of three as the pivot, moved to hi.
		mid := lo + (hi-lo)/2
		if better(hits[mid], hits[lo]) {
			hits[mid], hits[lo] = hits[lo], hits[mid]
		}
		if better(hits[hi], hits[lo]) {
			hits[hi], hits[lo] = hits[lo], hits[hi]
		}
		if better(hits[mid], hits[hi]) {
			hits[mid], hits[hi] = hits[hi], hits[mid]
		}
		pivot := hits[hi]
		p := lo
		for i := lo; i < hi; i++ {
			if better(hits[i], pivot) {
				hits[i], hits[p] = hits[p], hits[i]
				p++
			}
		}
		hits[p], hits[hi] = hits[hi], hits[p]
		switch {
		case p == k-1:
			return
		case p < k-1:
			lo = p + 1
		default:
			hi = p - 1
		}
	}
}

// maxKeptHits is the largest part buffer, in hits, ScanFunc keeps for
// the next scan: a search of a huge k does not keep its buffer.
const maxKeptHits = 1 << 16

// hitBufs holds ScanFunc's heaps' buffers for reuse.
var hitBufs = sync.Pool{New: func() any { return new([]Hit) }}

// takeHits returns an empty buffer from hitBufs with room for n hits.
func takeHits(n int) []Hit {
	b := *hitBufs.Get().(*[]Hit)
	return slices.Grow(b[:0], n)
}
