package fts

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/hmo-dev/hmo/engine"
)

// TestSearchResultsKeptAcrossSearches: a search reuses its scratch (the
// top k's heap and ties, the word cursors, a pooled search's
// frequencies) from one search to the next; the hits a caller keeps do
// not change when later searches run, one after another or at once, and
// each search, run again, finds what it found.
func TestSearchResultsKeptAcrossSearches(t *testing.T) {
	x, live := segmentedIndex(t)
	ctx := context.Background()
	type run struct {
		what string
		do   func() ([]engine.TextHit, error)
	}
	var runs []run
	for _, q := range queries {
		for _, k := range []int{1, 10, 300} {
			runs = append(runs, run{fmt.Sprintf("Search %q k=%d", q, k), func() ([]engine.TextHit, error) {
				return x.Search(ctx, q, k, engine.TextFilter{})
			}})
			runs = append(runs, run{fmt.Sprintf("SearchPool %q k=%d", q, k), func() ([]engine.TextHit, error) {
				// The pool is the first search's hits: scored from their
				// places in the postings (scoreLocated), or from the
				// documents when a merge moved them.
				first, err := x.Search(ctx, q, 200, engine.TextFilter{})
				if err != nil {
					return nil, err
				}
				ids := make([]uint64, len(first))
				for i, h := range first {
					ids[i] = h.ID
				}
				return x.SearchPool(ctx, q+" lake budget painting notes cat", k, engine.TextFilter{}, engine.TextPool{
					Docs: func() ([]engine.TextDoc, error) {
						var out []engine.TextDoc
						for _, id := range ids {
							if d, ok := live[id]; ok {
								out = append(out, d)
							}
						}
						return out, nil
					}, IDs: ids, Postings: 1})
			}})
		}
	}
	kept := make([][]engine.TextHit, len(runs))
	want := make([][]engine.TextHit, len(runs))
	for i, r := range runs {
		hits, err := r.do()
		if err != nil {
			t.Fatalf("%s: %v", r.what, err)
		}
		kept[i], want[i] = hits, slices.Clone(hits)
	}
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			for i := g; i < len(runs); i += 3 {
				if _, err := runs[i].do(); err != nil {
					t.Errorf("%s: %v", runs[i].what, err)
				}
			}
		})
	}
	wg.Wait()
	found := 0
	for i, r := range runs {
		if !slices.Equal(kept[i], want[i]) {
			t.Fatalf("%s: the hits kept changed under later searches", r.what)
		}
		again, err := r.do()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(again, want[i]) {
			t.Fatalf("%s: run again it finds %v, first %v", r.what, again, want[i])
		}
		found += len(again)
	}
	if found == 0 {
		t.Fatal("no search found anything")
	}
}
