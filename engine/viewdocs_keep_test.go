package engine

import (
	"context"
	"testing"

	"github.com/hmo-dev/hmo/internal/testembed"
	"github.com/hmo-dev/hmo/retrieve"
)

// TestViewsKeepRankedDocs: the documents a tier's ranking read stay with
// the view that holds their records, so that the ranking does not
// analyse them again once the doc cache starts over (the archive's
// searches fill it); they are the documents of the records as stored,
// and a record whose previous turn is forgotten gets its new one.
func TestViewsKeepRankedDocs(t *testing.T) {
	o := &Options{
		Mode:             ModeTiered,
		IndexContext:     1,
		Embedder:         testembed.Hash{ID: "test:hash/16", Size: 16},
		OpenVectorIndex:  func(_ string, dims int) (VectorIndex, error) { return newMemVectors(dims), nil },
		OpenTextIndex:    func(string) (TextIndex, error) { return &mapText{docs: map[uint64]TextDoc{}}, nil },
		NewTierTextIndex: func() (TextIndex, error) { return &mapText{docs: map[uint64]TextDoc{}}, nil },
	}
	e, err := Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	ids, err := e.Remember(ctx,
		Input{Scope: "s", Session: "1", Role: "user", Text: "the lake house has a green door"},
		Input{Scope: "s", Session: "1", Role: "assistant", Text: "a green door sounds lovely"},
		Input{Scope: "s", Session: "1", Role: "user", Text: "we painted it last spring"},
	)
	if err != nil {
		t.Fatal(err)
	}
	// The stored records, read before the tier lock is taken: Get takes
	// it (after the last recall's access).
	recs := make([]Record, len(ids))
	for i, id := range ids {
		if recs[i], err = e.Get(id); err != nil {
			t.Fatal(err)
		}
	}
	e.tiers.mu.Lock()
	defer e.tiers.mu.Unlock()
	src := &viewSource{e: e, views: e.tiers.views[1:]}
	docs := func() []retrieve.Doc {
		t.Helper()
		d, err := src.Docs(ids)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := docs()
	for i, id := range ids {
		if want := e.docOf(&recs[i]); !sameDoc(first[i], want) {
			t.Errorf("record %d's doc %+v, want the stored record's %+v", id, first[i], want)
		}
	}
	// The doc cache starts over: the views still hold the documents,
	// and nothing is analysed into the cache again.
	e.docCache.drop(ids...)
	again := docs()
	for i := range ids {
		if !sameDoc(again[i], first[i]) {
			t.Errorf("after the doc cache was dropped, record %d's doc %+v, want %+v", ids[i], again[i], first[i])
		}
		if _, ok := e.docCache.get(ids[i]); ok {
			t.Errorf("record %d analysed into the doc cache again: the views did not keep its doc", ids[i])
		}
	}
	// Forgetting the second turn relinks the third to the first.
	e.tiers.mu.Unlock()
	err = e.Forget(ctx, ids[1])
	if err != nil {
		e.tiers.mu.Lock()
		t.Fatal(err)
	}
	r, err := e.Get(ids[2])
	e.tiers.mu.Lock()
	if err != nil {
		t.Fatal(err)
	}
	after, err := src.Docs(ids[2:])
	if err != nil {
		t.Fatal(err)
	}
	if want := e.docOf(&r); !sameDoc(after[0], want) || after[0].Context == ids[1] {
		t.Errorf("after its previous turn was forgotten, the third turn's doc %+v, want %+v", after[0], want)
	}
}

// sameDoc compares what docOf sets.
func sameDoc(a, b retrieve.Doc) bool {
	return a.ID == b.ID && a.Prev == b.Prev && a.Context == b.Context && a.Scope == b.Scope && a.Session == b.Session &&
		a.Speaker == b.Speaker && a.Time.Equal(b.Time) && a.Text == b.Text && a.Derived == b.Derived
}
