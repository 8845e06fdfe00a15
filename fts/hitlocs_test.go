package fts

import (
	"context"
	"fmt"
	"testing"

	"github.com/hmo-dev/hmo/engine"
)

// TestPoolScoredFromPostings: a pooled search beyond its budget whose
// pool is an earlier search's hits (the feedback search's) scores them
// from the postings, without asking for their documents, and gives
// each the very score and coverage that counting the documents gives
// (bit for bit), for every filter; a pool with a document the snapshot
// no longer holds, one the index never returned (here a record it never
// held), more postings to decode than poolDecodeMax, or lists that would
// take the pools past their share of the cache is counted from its
// documents as before.
func TestPoolScoredFromPostings(t *testing.T) {
	x, live := segmentedIndex(t)
	ctx := context.Background()
	docsOf := func(ids []uint64, calls *int) func() ([]engine.TextDoc, error) {
		return func() ([]engine.TextDoc, error) {
			*calls++
			return liveDocs(live, ids), nil
		}
	}
	// pooled returns SearchPool's hits for q given the pool ids (by their
	// ids, and by their documents alone) and how often each asked for
	// the documents.
	pooled := func(q string, f engine.TextFilter, k int, ids []uint64) (byIDs, byDocs []engine.TextHit, idCalls, docCalls int) {
		t.Helper()
		var err error
		byIDs, err = x.SearchPool(ctx, q, k, f, engine.TextPool{Docs: docsOf(ids, &idCalls), IDs: ids, Postings: 1})
		if err != nil {
			t.Fatal(err)
		}
		byDocs, err = x.SearchPool(ctx, q, k, f, engine.TextPool{Docs: docsOf(ids, &docCalls), Postings: 1})
		if err != nil {
			t.Fatal(err)
		}
		return byIDs, byDocs, idCalls, docCalls
	}
	same := func(what string, got, want []engine.TextHit) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d hits, want %d", what, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: hit %d is %+v, want %+v", what, i, got[i], want[i])
			}
		}
	}
	// The index merges its segments in the background: a hit's place is
	// then in a segment the next snapshot does not hold, and the pool is
	// counted from its documents (with the same result).
	located, cases := 0, 0
	for _, q := range queries {
		expanded := q + " lake budget painting notes cat"
		for _, f := range filters() {
			for _, k := range []int{1, 10, 300} {
				first, err := x.Search(ctx, q, 200, engine.TextFilter{})
				if err != nil {
					t.Fatal(err)
				}
				if len(first) == 0 {
					continue
				}
				ids := make([]uint64, len(first), len(first)+1)
				for i, h := range first {
					ids[i] = h.ID
				}
				ids = append(ids, ids[0]) // given twice
				what := fmt.Sprintf("%q %+v k=%d", q, f, k)
				byIDs, byDocs, idCalls, docCalls := pooled(expanded, f, k, ids)
				same(what, byIDs, byDocs)
				if docCalls != 1 || idCalls > 1 {
					t.Fatalf("%s: the pool's documents were asked for %d and %d times", what, idCalls, docCalls)
				}
				cases++
				if idCalls == 0 {
					located++
				}
			}
		}
	}
	if located < cases/2 {
		t.Fatalf("%d of %d pools of earlier hits were scored from the postings", located, cases)
	}
	t.Logf("%d of %d pools scored from the postings", located, cases)

	first, err := x.Search(ctx, "cat budget", 50, engine.TextFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, h := range first {
		ids = append(ids, h.ID)
	}
	oldMax := poolDecodeMax
	t.Cleanup(func() { poolDecodeMax = oldMax })
	for _, c := range []struct {
		name string
		ids  []uint64
		prep func()
	}{
		{"a record the index never held", append([]uint64{999_999}, ids...), nil},
		{"more postings than poolDecodeMax", ids, func() {
			poolDecodeMax = 0
			x.postings.close() // nothing cached: every list to decode
			x.postings = newPostingsCache(DefaultPostingsCache)
		}},
		{"the pools' share of the cache spent", ids, func() {
			poolDecodeMax = oldMax
			x.postings.close()
			x.postings = newPostingsCache(DefaultPostingsCache)
			x.poolDecoded.Store(DefaultPostingsCache/poolDecodeShare - poolPostingBytes)
		}},
		{"a document deleted since", ids, func() {
			poolDecodeMax = oldMax
			if err := x.Apply(nil, ids[len(ids)-1:], 3000); err != nil {
				t.Fatal(err)
			}
			delete(live, ids[len(ids)-1])
		}},
	} {
		if c.prep != nil {
			c.prep()
		}
		byIDs, byDocs, idCalls, _ := pooled("cat budget lake", engine.TextFilter{}, 20, c.ids)
		same(c.name, byIDs, byDocs)
		if idCalls != 1 {
			t.Errorf("%s: the pool's documents were asked for %d times, want 1", c.name, idCalls)
		}
	}
}

// TestHitLocs: the table returns the last place put for an id, keeps
// every id of a pool of a hundred, and forgets the least recently put
// of a set first.
func TestHitLocs(t *testing.T) {
	var c hitLocs
	if _, _, ok := c.get(7); ok {
		t.Fatal("an empty table holds 7")
	}
	ids := make([]uint64, 100)
	segs := make([]uint64, 100)
	docs := make([]uint64, 100)
	for i := range ids {
		ids[i], segs[i], docs[i] = uint64(1000+i*37), uint64(i%3), uint64(i*2)
	}
	c.put(ids, segs, docs)
	c.put(ids[:1], []uint64{9}, []uint64{99}) // moved
	for i, id := range ids {
		seg, doc, ok := c.get(id)
		want := [2]uint64{segs[i], docs[i]}
		if i == 0 {
			want = [2]uint64{9, 99}
		}
		if !ok || [2]uint64{seg, doc} != want {
			t.Errorf("id %d: %d, %d, %t; want %v", id, seg, doc, ok, want)
		}
	}
	// hitLocWays more ids of a set that holds ids[5]: ids[5], put first, is forgotten.
	var same []uint64
	for id := uint64(1); len(same) < hitLocWays; id++ {
		if hitLocSet(id) == hitLocSet(ids[5]) && id != ids[5] {
			same = append(same, id)
		}
	}
	c.put(same, make([]uint64, len(same)), make([]uint64, len(same)))
	if _, _, ok := c.get(ids[5]); ok {
		t.Error("the least recently put of a full set was kept")
	}
	for _, id := range same {
		if _, _, ok := c.get(id); !ok {
			t.Errorf("id %d, just put, is not held", id)
		}
	}
	if _, _, ok := c.get(0); ok {
		t.Error("id 0 is held")
	}
}
