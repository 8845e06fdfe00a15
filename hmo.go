// Package hmo opens a memory store wired with the embedded defaults: the
// static word-vector embedder, the heuristic importance scorer, the HNSW
// vector index and the Bleve full-text index. Programs that want other adapters call engine.Open
// with their own Options.
package hmo

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
	"github.com/hmo-dev/hmo/hnsw"
	"github.com/hmo-dev/hmo/localllm"
)

// EnvDir names the environment variable that overrides the store directory.
const EnvDir = "HMO_DIR"

// Open opens the store in dir. Nil opts, and nil Embedder,
// OpenVectorIndex or OpenTextIndex in opts, mean the embedded defaults.
func Open(dir string, opts *engine.Options) (*engine.Engine, error) {
	var o engine.Options
	if opts != nil {
		o = *opts
	}
	if o.Embedder == nil {
		// Each store keeps its own corpus statistics, so it gets its own
		// embedder; the decoded word table is shared.
		emb, err := localllm.NewStatic(nil)
		if err != nil {
			return nil, err
		}
		o.Embedder = emb
	}
	if o.Importance == nil {
		h, err := localllm.NewHeuristic(nil)
		if err != nil {
			return nil, err
		}
		o.Importance = h
	}
	if o.OpenVectorIndex == nil {
		o.OpenVectorIndex = func(dir string, dims int) (engine.VectorIndex, error) {
			return hnsw.Open(dir, &hnsw.Options{Dims: dims})
		}
	}
	if o.NewTierTextIndex == nil {
		o.NewTierTextIndex = func() (engine.TextIndex, error) { return fts.NewMemory("") }
	}
	if o.OpenTextIndex == nil {
		o.OpenTextIndex = func(dir string) (engine.TextIndex, error) { return fts.Open(dir, nil) }
	}
	return engine.Open(dir, &o)
}

// DefaultDir is the store directory: $HMO_DIR, or "hmo" under the user's
// data directory ($XDG_DATA_HOME or ~/.local/share on Linux,
// ~/Library/Application Support on macOS, %LocalAppData% on Windows).
func DefaultDir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, nil
	}
	base, err := dataHome()
	if err != nil {
		return "", fmt.Errorf("hmo: no data directory (set %s): %w", EnvDir, err)
	}
	return filepath.Join(base, "hmo"), nil
}

func dataHome() (string, error) {
	switch runtime.GOOS {
	case "windows", "darwin":
		return os.UserConfigDir()
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share"), nil
}
