package fts

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/engine"
)

// TestPoolFromFirstPass: a pooled search of an earlier search's hits
// whose words begin with that search's goes on from the scores and
// coverage it kept, and gives every hit, for every filter and k, the
// very score and coverage (bit for bit) that the pool gets when every
// word is looked up in the postings (the kept searches forgotten) and
// when its documents are counted, whether the first search summed its
// scores by MaxScore or by accumulating. A pool whose words do not begin with
// the first search's, a pool in another order than the hits, and a
// pooled search after a document was added (the statistics and idfs
// change, the pool's places do not) start from nothing, with the same
// result.
func TestPoolFromFirstPass(t *testing.T) {
	x, live := segmentedIndex(t)
	ctx := context.Background()
	docs := func(ids []uint64) func() ([]engine.TextDoc, error) {
		return func() ([]engine.TextDoc, error) { return liveDocs(live, ids), nil }
	}
	pooled := func(q string, f engine.TextFilter, k int, ids []uint64, byIDs bool) []engine.TextHit {
		t.Helper()
		p := engine.TextPool{Docs: docs(ids), Postings: 1}
		if byIDs {
			p.IDs = ids
		}
		hits, err := x.SearchPool(ctx, q, k, f, p)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	first := func(q string) []uint64 {
		t.Helper()
		hits, err := x.Search(ctx, q, 200, engine.TextFilter{})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]uint64, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		return ids
	}
	same := func(what string, got, want []engine.TextHit) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %d hits\n%+v\nwant %d\n%+v", what, len(got), got, len(want), want)
		}
	}
	cases := 0
	defer func() { forceMaxScore, forceAccumulate = false, false }()
	for i, q := range queries {
		// The first search's sums by MaxScore, by accumulating, or as
		// the costs choose.
		forceMaxScore, forceAccumulate = i%3 == 1, i%3 == 2
		expanded := q + " lake budget painting notes cat"
		for _, f := range filters() {
			for _, k := range []int{1, 10, 300} {
				ids := first(q)
				if len(ids) == 0 {
					continue
				}
				what := fmt.Sprintf("%q %+v k=%d", q, f, k)
				was := x.passes.reused()
				got := pooled(expanded, f, k, ids, true)
				if x.passes.reused() == was {
					// The index merges segments in the background: the
					// hits' places may be gone, and then so is the pool's
					// scoring from the postings.
					continue
				}
				cases++
				x.passes.reset()
				same(what+", every word looked up", got, pooled(expanded, f, k, ids, true))
				same(what+", the documents counted", got, pooled(expanded, f, k, ids, false))
				if x.passes.reused() != was+1 {
					t.Fatalf("%s: the kept search was used again after reset", what)
				}
			}
		}
	}
	if cases < 100 {
		t.Fatalf("%d pooled searches went on from the first", cases)
	}
	t.Logf("%d pooled searches went on from the first", cases)

	forceMaxScore, forceAccumulate = false, false
	q, expanded := "cat budget", "cat budget lake painting"
	var ids0 uint64
	for id := range live {
		ids0 = id
		break
	}
	for _, c := range []struct {
		name string
		q    string
		ids  func(ids []uint64) []uint64
		prep func(ids []uint64)
	}{
		{"words that do not begin with the first search's", "lake " + q, nil, nil},
		{"the pool in another order", expanded, func(ids []uint64) []uint64 {
			slices.Reverse(ids)
			return ids
		}, nil},
		{"a document added since", expanded, nil, func([]uint64) {
			d := live[ids0]
			d.ID, d.Text = 5000, "cat cat budget lake"
			if err := x.Apply([]engine.TextDoc{d}, nil, 3000); err != nil {
				t.Fatal(err)
			}
			live[d.ID] = d
		}},
	} {
		ids := first(q)
		if c.ids != nil {
			ids = c.ids(ids)
		}
		if c.prep != nil {
			c.prep(ids)
		}
		was := x.passes.reused()
		got := pooled(c.q, engine.TextFilter{}, 20, ids, true)
		if x.passes.reused() != was {
			t.Errorf("%s: the pooled search went on from the first", c.name)
		}
		same(c.name, got, pooled(c.q, engine.TextFilter{}, 20, ids, false))
	}
}

// TestNoCoverage: a search, and a pooled search of its hits, asked for
// no coverage give the hits and scores (bit for bit) of the same
// searches asked for it, every coverage 0, whether the first search
// summed by MaxScore or by accumulating; the pooled search goes on from
// the first. A pooled search that asks for coverage after a first search
// that did not starts from nothing, and its coverage is the counted one.
func TestNoCoverage(t *testing.T) {
	x, live := segmentedIndex(t)
	ctx := context.Background()
	docs := func(ids []uint64) func() ([]engine.TextDoc, error) {
		return func() ([]engine.TextDoc, error) { return liveDocs(live, ids), nil }
	}
	search := func(q string, f engine.TextFilter, k int, pool []uint64, byIDs bool) []engine.TextHit {
		t.Helper()
		var hits []engine.TextHit
		var err error
		if pool == nil {
			hits, err = x.Search(ctx, q, k, f)
		} else {
			p := engine.TextPool{Docs: docs(pool), Postings: 1}
			if byIDs {
				p.IDs = pool
			}
			hits, err = x.SearchPool(ctx, q, k, f, p)
		}
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	uncovered := func(hits []engine.TextHit) []engine.TextHit {
		out := slices.Clone(hits)
		for i := range out {
			out[i].Coverage = 0
		}
		return out
	}
	same := func(what string, got, want []engine.TextHit) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %d hits\n%+v\nwant %d\n%+v", what, len(got), got, len(want), want)
		}
	}
	defer func() { forceMaxScore, forceAccumulate = false, false }()
	covered, reused := 0, 0
	for i, q := range queries {
		forceMaxScore, forceAccumulate = i%3 == 1, i%3 == 2
		expanded := q + " lake budget painting notes cat"
		for _, f := range filters() {
			what := fmt.Sprintf("%q %+v", q, f)
			want := search(q, f, 100, nil, false)
			nf := f
			nf.NoCoverage = true
			first := search(q, nf, 100, nil, false)
			same(what, first, uncovered(want))
			for _, h := range want {
				if h.Coverage != 0 {
					covered++
				}
			}
			if len(first) == 0 {
				continue
			}
			ids := make([]uint64, len(first))
			for j, h := range first {
				ids[j] = h.ID
			}
			was := x.passes.reused()
			got := search(expanded, nf, 50, ids, true)
			if x.passes.reused() != was {
				reused++
			}
			counted := search(expanded, f, 50, ids, false)
			same(what+", pooled", got, uncovered(counted))
			// Coverage asked for after a first search that skipped it
			// (the only one kept).
			x.passes.reset()
			search(q, nf, 100, nil, false)
			was = x.passes.reused()
			same(what+", pooled with coverage", search(expanded, f, 50, ids, true), counted)
			if x.passes.reused() != was {
				t.Fatalf("%s: a pooled search with coverage went on from a first search without", what)
			}
		}
	}
	if covered == 0 || reused < 20 {
		t.Fatalf("%d hits with a coverage, %d pooled searches went on from the first", covered, reused)
	}
	t.Logf("%d pooled searches without coverage went on from the first", reused)
}

// liveDocs is the documents of ids that live holds, in the order of ids:
// what a pool's Docs reads.
func liveDocs(live map[uint64]engine.TextDoc, ids []uint64) []engine.TextDoc {
	var out []engine.TextDoc
	for _, id := range ids {
		if d, ok := live[id]; ok {
			out = append(out, d)
		}
	}
	return out
}
