// Package teststore opens a small engine for tests of the packages above
// the engine (api, server, client, mcp): flat mode, the hashing test
// embedder, the real indexes, in a test's temporary directory. It is for
// tests only.
package teststore

import (
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
	"github.com/hmo-dev/hmo/internal/testembed"
	"github.com/hmo-dev/hmo/vecfile"
)

// Options are the engine options of a test store.
func Options() *engine.Options {
	return &engine.Options{
		Embedder: testembed.Hash{ID: "test:hash/64", Size: 64},
		OpenVectorIndex: func(dir string, dims int) (engine.VectorIndex, error) {
			return vecfile.Open(dir, &vecfile.Options{Dims: dims, Format: vecfile.Int8Rescore, KeepFormat: true})
		},
		OpenTextIndex:    func(dir string) (engine.TextIndex, error) { return fts.Open(dir, &fts.Options{AsyncPersist: true}) },
		NewTierTextIndex: func() (engine.TextIndex, error) { return fts.NewMemory("") },
	}
}

// Open opens a store in a new temporary directory and closes it when the
// test ends.
func Open(t testing.TB) *engine.Engine {
	t.Helper()
	e, err := engine.Open(t.TempDir(), Options())
	if err != nil {
		t.Fatalf("open test store: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
