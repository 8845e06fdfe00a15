package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
	"github.com/hmo-dev/hmo/retrieve"
)

// poolSpy is the archive's text index, keeping the documents it was
// given and the pools its pooled searches were given.
type poolSpy struct {
	*fts.Index
	mu      sync.Mutex
	applied map[uint64]engine.TextDoc
	pools   [][]engine.TextDoc
	ids     [][]uint64 // each pool's TextPool.IDs
}

func (s *poolSpy) Apply(docs []engine.TextDoc, deletes []uint64, wm uint64) error {
	s.mu.Lock()
	for _, d := range docs {
		s.applied[d.ID] = d
	}
	for _, id := range deletes {
		delete(s.applied, id)
	}
	s.mu.Unlock()
	return s.Index.Apply(docs, deletes, wm)
}

func (s *poolSpy) SearchPool(ctx context.Context, q string, k int, f engine.TextFilter, p engine.TextPool) ([]engine.TextHit, error) {
	docs, err := p.Docs()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.pools = append(s.pools, docs)
	s.ids = append(s.ids, p.IDs)
	s.mu.Unlock()
	return s.Index.SearchPool(ctx, q, k, f, engine.TextPool{Docs: func() ([]engine.TextDoc, error) { return docs, nil }, Postings: p.Postings})
}

// TestFeedbackPoolIsIndexedDocuments: when the prf stage's second search
// is bounded (here always: PRF.Postings 1), the engine hands the text
// index the first pass's records as the very documents it indexed (own
// text, previous turn as context, role, labels), so that the index
// scores them as its exhaustive search would; it also names them by id
// (TextPool.IDs), so that the index may score them from its postings.
func TestFeedbackPoolIsIndexedDocuments(t *testing.T) {
	spy := &poolSpy{applied: map[uint64]engine.TextDoc{}}
	o := testOptions(&fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)})
	o.Mode = engine.ModeFlat
	o.PRF = retrieve.PRFOptions{Postings: 1}
	o.OpenTextIndex = func(dir string) (engine.TextIndex, error) {
		x, err := fts.Open(dir, nil)
		spy.Index = x
		return spy, err
	}
	e, err := engine.Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var ins []engine.Input
	for s := range 4 {
		for i := range 6 {
			ins = append(ins, engine.Input{Scope: "home", Session: fmt.Sprintf("s%d", s), Role: []string{"user", "assistant"}[i%2],
				Text: fmt.Sprintf("turn %d of session %d: the garden needs %s before the %s trip", i, s, []string{"water", "seeds", "a fence"}[i%3], []string{"Lisbon", "Oslo"}[s%2])})
		}
	}
	remember(t, e, ins...)
	if _, err := e.Recall(context.Background(), engine.Query{Text: "garden fence", K: 5}); err != nil {
		t.Fatal(err)
	}
	spy.mu.Lock()
	defer spy.mu.Unlock()
	if len(spy.pools) == 0 {
		t.Fatal("the feedback search was not pooled")
	}
	withContext := 0
	for i, pool := range spy.pools {
		if len(spy.ids[i]) != len(pool) {
			t.Errorf("a pool of %d documents named by %d ids", len(pool), len(spy.ids[i]))
		}
		for j := range min(len(pool), len(spy.ids[i])) {
			if pool[j].ID != spy.ids[i][j] {
				t.Errorf("pool document %d is record %d, its id says %d", j, pool[j].ID, spy.ids[i][j])
			}
		}
		if len(pool) == 0 {
			t.Error("an empty pool")
		}
		for _, d := range pool {
			if want, ok := spy.applied[d.ID]; !ok || d != want {
				t.Errorf("pool document %+v, indexed as %+v", d, want)
			}
			if d.Context != "" {
				withContext++
			}
		}
	}
	if withContext == 0 {
		t.Error("no pool document had a context: the test does not cover it")
	}
}
