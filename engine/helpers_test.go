package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
	"github.com/hmo-dev/hmo/hnsw"
	"github.com/hmo-dev/hmo/internal/testembed"
)

// fakeClock is an injected clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

func testOptions(clock *fakeClock) *engine.Options {
	return &engine.Options{
		Embedder: testembed.Hash{ID: "test:hash/64", Size: 64},
		OpenVectorIndex: func(dir string, dims int) (engine.VectorIndex, error) {
			return hnsw.Open(dir, &hnsw.Options{Dims: dims})
		},
		OpenTextIndex:    func(dir string) (engine.TextIndex, error) { return fts.Open(dir, nil) },
		NewTierTextIndex: func() (engine.TextIndex, error) { return fts.NewMemory("") },
		Clock:            clock.Now,
		Mode:             engine.ModeTiered, // the engine tests exercise the tier walk; TestModesAgreeOnSmallStore covers flat
	}
}

func openTest(t *testing.T, dir string) (*engine.Engine, *fakeClock) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	e, err := engine.Open(dir, testOptions(clock))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e, clock
}

func remember(t *testing.T, e *engine.Engine, ins ...engine.Input) []uint64 {
	t.Helper()
	ids, err := e.Remember(context.Background(), ins...)
	if err != nil {
		t.Fatalf("Remember: %v", err)
	}
	return ids
}

func recallIDs(t *testing.T, e *engine.Engine, q engine.Query) []uint64 {
	t.Helper()
	res, err := e.Recall(context.Background(), q)
	if err != nil {
		t.Fatalf("Recall(%q): %v", q.Text, err)
	}
	ids := make([]uint64, len(res))
	for i, r := range res {
		ids[i] = r.Record.ID
	}
	return ids
}

func contains(ids []uint64, id uint64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
