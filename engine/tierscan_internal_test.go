package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// The tiers' vectors scanned beside the lexical search (scanAsync) merge
// into the walk's candidates exactly as the scans one after the other
// did: whether the goroutine or the waiting caller runs the scan, for a
// walk that scans Tier 1 at its first tier and Tier 2 at its second, or
// both at once, filtered or not.
func TestTierScanBesideSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const dims = 24
	vec := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	newViews := func(n1, n2 int) []*view {
		views := []*view{nil, {}, {}}
		id := uint64(1)
		for k, n := range []int{n1, n2} {
			v := &view{recs: map[uint64]*Record{}, pos: map[uint64]int{}, scopes: map[string]int{}}
			for range n {
				rec := &Record{ID: id, Scope: fmt.Sprintf("s%d", r.IntN(3))}
				if err := v.put(rec, vec()); err != nil {
					t.Fatal(err)
				}
				id++
			}
			views[k+1] = v
		}
		return views
	}
	// sequential is the walk's scan before scanAsync.
	sequential := func(w *tierSearch, views []*view, q *Query, qv []float32, c int, tier uint8) {
		for ; w.scanned < tier; w.scanned++ {
			v, err := views[w.scanned+1].searchVector(q, qv, c)
			if err != nil {
				t.Fatal(err)
			}
			w.vec = topOf(append(w.vec, v...), c)
		}
	}
	for i := range 300 {
		views := newViews(r.IntN(60), r.IntN(300))
		q := &Query{}
		if i%3 == 0 {
			q.Scope = "s1"
		}
		qv, c := vec(), 1+r.IntN(40)
		// Tier 1 then Tier 2, or Tier 2 alone (Tier 1 lacked the terms).
		steps := [][]uint8{{1, 2}, {2}}[i%2]
		var want, got tierSearch
		for _, tier := range steps {
			sequential(&want, views, q, qv, c, tier)
			wait := got.scanAsync(views[:tier+1], q, qv, c)
			if i%4 < 2 {
				time.Sleep(50 * time.Microsecond) // the goroutine most likely scans
			}
			if err := wait(); err != nil {
				t.Fatal(err)
			}
			if got.scanned != want.scanned || !reflect.DeepEqual(got.vec, want.vec) {
				t.Fatalf("case %d, tier %d: scanned %d %v, want %d %v", i, tier, got.scanned, got.vec, want.scanned, want.vec)
			}
		}
		// A tier already scanned is not scanned again.
		if err := got.scanAsync(views[:2], q, qv, c)(); err != nil || !reflect.DeepEqual(got.vec, want.vec) {
			t.Fatalf("case %d: rescanned: %v", i, err)
		}
	}
}
