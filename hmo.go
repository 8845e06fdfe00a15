// Package hmo opens a memory store wired with the embedded defaults: the
// static word-vector embedder, the HNSW vector index and the Bleve
// full-text index. Programs that want other adapters call engine.Open
// with their own Options.
package hmo

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
	"github.com/hmo-dev/hmo/hnsw"
	"github.com/hmo-dev/hmo/localllm"
)

// EnvDir names the environment variable that overrides the store directory.
const EnvDir = "HMO_DIR"

var (
	staticOnce sync.Once
	static     *localllm.Static
	staticErr  error
)

// StaticEmbedder returns the embedded embedder, decoding its table once
// per process.
func StaticEmbedder() (*localllm.Static, error) {
	staticOnce.Do(func() { static, staticErr = localllm.NewStatic(nil) })
	return static, staticErr
}

// Open opens the store in dir. Nil opts, and nil Embedder,
// OpenVectorIndex or OpenTextIndex in opts, mean the embedded defaults.
func Open(dir string, opts *engine.Options) (*engine.Engine, error) {
	var o engine.Options
	if opts != nil {
		o = *opts
	}
	if o.Embedder == nil {
		emb, err := StaticEmbedder()
		if err != nil {
			return nil, err
		}
		// Each store keeps its own corpus statistics: give it its own copy.
		o.Embedder = emb.Clone()
	}
	if o.OpenVectorIndex == nil {
		o.OpenVectorIndex = func(dir string, dims int) (engine.VectorIndex, error) {
			return hnsw.Open(dir, &hnsw.Options{Dims: dims})
		}
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
