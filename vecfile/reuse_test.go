package vecfile_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/vecfile"
)

// TestInt8PartitionResultsKeptAcrossSearches: the partitioned int8
// search reuses its scratch (the nearest lists, the lists probed, their
// spans, the scan's heaps) from one search to the next; the hits a
// caller keeps do not change when other searches run after them, in
// turn or at once, and each search finds what it finds alone.
func TestInt8PartitionResultsKeptAcrossSearches(t *testing.T) {
	defer vecfile.SetInt8MinShare(vecfile.SetInt8MinShare(0))
	dir := t.TempDir()
	o := int8PartOpts(16, 4)
	x := openPart(t, dir, o)
	mustApply(t, x, docsDims(1, 3000, 16), nil, 1)
	mustClose(t, x)
	x = openPart(t, dir, o)
	defer x.Close()
	if !x.Partitioned() {
		t.Fatal("no partition")
	}
	qs := docsDims(5, 40, 16)
	search := func(q engine.VectorDoc, k int) []engine.VectorHit {
		hits, err := x.Search(q.Vector, k)
		if err != nil {
			t.Error(err)
		}
		return hits
	}
	kept := make([][]engine.VectorHit, len(qs))
	want := make([][]engine.VectorHit, len(qs))
	for i, q := range qs {
		kept[i] = search(q, 5+i%3*20) // k 5, 25, 45: buffers of several sizes
		want[i] = slices.Clone(kept[i])
		if len(kept[i]) == 0 {
			t.Fatalf("query %d: no hits", i)
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < len(qs); i += 4 {
				if got := search(qs[i], 5+i%3*20); !slices.Equal(got, want[i]) {
					t.Errorf("query %d at once with others: %v, alone %v", i, got, want[i])
				}
			}
		})
	}
	wg.Wait()
	for i := range qs {
		if !slices.Equal(kept[i], want[i]) {
			t.Fatalf("query %d: the hits kept changed under later searches: %v, were %v", i, kept[i], want[i])
		}
	}
}
