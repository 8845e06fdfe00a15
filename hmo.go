// Package hmo opens a memory store wired with the embedded defaults: the
// static word-vector embedder, the heuristic importance scorer, the exact
// memory-mapped vector index (vecfile) and the Bleve full-text index;
// and, when configured, a
// local Ollama server for embeddings and the LLM steps. Programs that
// want other adapters call engine.Open with their own Options.
package hmo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
	"github.com/hmo-dev/hmo/hnsw"
	"github.com/hmo-dev/hmo/localllm/heuristic"
	"github.com/hmo-dev/hmo/localllm/ollama"
	"github.com/hmo-dev/hmo/localllm/static"
	"github.com/hmo-dev/hmo/vecfile"
)

// EnvDir names the environment variable that overrides the store directory.
const EnvDir = "HMO_DIR"

// Open opens the store in dir. Nil opts, and nil Embedder,
// OpenVectorIndex or OpenTextIndex in opts, mean the embedded defaults. A
// store built with an Ollama embedder reopens with it (at $OLLAMA_HOST);
// the LLM steps are off. OpenWith configures the models.
func Open(dir string, opts *engine.Options) (*engine.Engine, error) {
	return OpenWith(dir, opts, nil)
}

// OpenWith opens the store in dir like Open, with the local models m
// (nil: no chat model, static embedder for a new store).
func OpenWith(dir string, opts *engine.Options, m *Models) (*engine.Engine, error) {
	var o engine.Options
	if opts != nil {
		o = *opts
	}
	var mm Models
	if m != nil {
		mm = *m
	}
	var client *ollama.Ollama
	dial := func() (*ollama.Ollama, error) {
		if client != nil {
			return client, nil
		}
		var err error
		co := mm.Ollama
		if mm.Host != "" {
			co.Host = mm.Host
		}
		client, err = ollama.New(&co)
		return client, err
	}
	if o.Embedder == nil {
		emb, err := storeEmbedder(dir, o.OpenTimeout, mm.Embedder, dial)
		if err != nil {
			return nil, err
		}
		o.Embedder = emb
	}
	if mm.ChatModel != "" {
		c, err := dial()
		if err != nil {
			return nil, err
		}
		if err := wireSteps(&o, c, mm.ChatModel); err != nil {
			return nil, err
		}
	}
	if o.Importance == nil {
		h, err := heuristic.New(nil)
		if err != nil {
			return nil, err
		}
		o.Importance = h
	}
	if o.OpenVectorIndex == nil {
		o.OpenVectorIndex = OpenVectorIndex
		if o.ShortLived {
			o.OpenVectorIndex = func(dir string, dims int) (engine.VectorIndex, error) {
				vo := vectorOptions(dims)
				vo.NoBackgroundBuild = true
				return openVectorIndex(dir, vo)
			}
		}
		if o.ReadOnly {
			o.OpenVectorIndex = func(dir string, dims int) (engine.VectorIndex, error) {
				vo := vectorOptions(dims)
				vo.ReadOnly = true
				return vecfile.Open(dir, vo)
			}
		}
	}
	if o.NewTierTextIndex == nil {
		// The tiers' indexes share their documents' analysis: a record
		// moved between tiers, or held in two indexes, is analysed once.
		shared := fts.NewAnalysed(o.Tiers.Tier1Cap + o.Tiers.Tier2Cap)
		o.NewTierTextIndex = func() (engine.TextIndex, error) { return fts.NewMemoryWith(&fts.Options{Analysed: shared}) }
	}
	if o.OpenTextIndex == nil {
		ro := o.ReadOnly
		o.OpenTextIndex = func(dir string) (engine.TextIndex, error) {
			return fts.Open(dir, &fts.Options{ReadOnly: ro, AsyncPersist: !ro})
		}
	}
	return engine.Open(dir, &o)
}

// OpenVectorIndex opens the default vector index of a store in dir: the
// exact memory-mapped index (vecfile), with an HNSW graph in dir/graph
// that a background builder adds once the archive passes
// hnsw.DefaultGraphAbove vectors. A new index keeps int8 rows only
// (vecfile.Int8Rescore): bbolt keeps the one float32 copy of each
// vector, and the engine rescores the int8 scan's candidates from it. An
// index made by an older hmo keeps its format (float32 rows and their
// int8 companion).
func OpenVectorIndex(dir string, dims int) (engine.VectorIndex, error) {
	return openVectorIndex(dir, vectorOptions(dims))
}

// vectorOptions are the vector file's options of a store's default
// vector index: int8 rows in a new index, an older index's format kept.
func vectorOptions(dims int) *vecfile.Options {
	return &vecfile.Options{Dims: dims, Format: vecfile.Int8Rescore, KeepFormat: true}
}

// openVectorIndex is OpenVectorIndex with the vector file's options o.
func openVectorIndex(dir string, o *vecfile.Options) (engine.VectorIndex, error) {
	dims := o.Dims
	x, err := vecfile.Open(dir, o)
	if err != nil {
		return nil, err
	}
	// M 32, efConstruction 128, efSearch 256: the first setting that
	// reached recall@10 >= 0.95 against the exact scan on hmo's own
	// vectors (0.97 at 20K; M 24/24/64 gave 0.91). BENCHMARKS.md, issue 11.
	g := hnsw.Options{Dims: dims, M: 32, EfConstruction: 128, EfSearch: 256}
	a, err := hnsw.Accelerate(x, filepath.Join(dir, "graph"), &hnsw.AccelOptions{Graph: g})
	if err != nil {
		x.Close()
		return nil, err
	}
	return a, nil
}

// Models configures the local models OpenWith wires. Zero values mean the
// defaults.
type Models struct {
	// Host is the Ollama server. Default $OLLAMA_HOST, else
	// ollama.DefaultHost.
	Host string
	// ChatModel is the Ollama chat model of the LLM steps: importance,
	// compression, persona profile and the tier-walk sufficiency
	// reflection. Default "": the steps are off and the embedded
	// defaults run.
	ChatModel string
	// Embedder is the embedder of a new store: "static" (default),
	// "ollama" (ollama.DefaultEmbedModel) or "ollama:<model>". An
	// existing store keeps the embedder it records; switching is
	// Engine.Reindex (hmo reindex).
	Embedder string
	// Ollama tunes the client: timeouts, retries, breaker.
	Ollama ollama.Options
}

// Embedder specs.
const (
	EmbedderStatic = "static"
	EmbedderOllama = "ollama"
)

// NewEmbedder builds the embedder a spec names: "static", "ollama" or
// "ollama:<model>". An Ollama embedder asks the server for its
// dimensions.
func NewEmbedder(ctx context.Context, spec string, m *Models) (engine.Embedder, error) {
	var mm Models
	if m != nil {
		mm = *m
	}
	spec = strings.TrimSpace(spec)
	switch {
	case spec == "" || spec == EmbedderStatic:
		return static.New(nil)
	case spec == EmbedderOllama || strings.HasPrefix(spec, EmbedderOllama+":"):
		co := mm.Ollama
		if mm.Host != "" {
			co.Host = mm.Host
		}
		c, err := ollama.New(&co)
		if err != nil {
			return nil, err
		}
		model, _ := strings.CutPrefix(spec, EmbedderOllama)
		return ollama.NewEmbedder(ctx, c, strings.TrimPrefix(model, ":"), 0)
	}
	return nil, fmt.Errorf("%w: embedder %q (want static, ollama or ollama:<model>)", engine.ErrInvalidOption, spec)
}

// storeEmbedder picks the embedder of the store in dir: the one its
// identity records, or spec for a new store.
func storeEmbedder(dir string, timeout time.Duration, spec string, dial func() (*ollama.Ollama, error)) (engine.Embedder, error) {
	id, err := engine.ReadIdentity(dir, timeout)
	switch {
	case errors.Is(err, engine.ErrNotFound):
		if spec == "" || spec == EmbedderStatic {
			// Each store keeps its own corpus statistics, so it gets
			// its own embedder; the decoded word table is shared.
			return static.New(nil)
		}
		c, err := dial()
		if err != nil {
			return nil, err
		}
		model, ok := strings.CutPrefix(spec, EmbedderOllama)
		if !ok || (model != "" && model[0] != ':') {
			return nil, fmt.Errorf("%w: embedder %q (want static, ollama or ollama:<model>)", engine.ErrInvalidOption, spec)
		}
		ctx, cancel := context.WithTimeout(context.Background(), ollama.DefaultCallTimeout)
		defer cancel()
		return ollama.NewEmbedder(ctx, c, strings.TrimPrefix(model, ":"), 0)
	case err != nil:
		return nil, err
	}
	if model, ok := ollama.ParseEmbedderName(id.Embedder); ok {
		c, err := dial()
		if err != nil {
			return nil, err
		}
		// The store records the dimensions: no call to the server.
		return ollama.NewEmbedder(context.Background(), c, model, id.Dims)
	}
	return static.New(nil)
}

// wireSteps plugs the Ollama LLM steps into o, each over its embedded
// default.
func wireSteps(o *engine.Options, c *ollama.Ollama, model string) error {
	if o.Enricher == nil {
		steps, err := ollama.NewSteps(c, &ollama.StepsOptions{Model: model})
		if err != nil {
			return err
		}
		o.Enricher = steps
	}
	if o.Summarize == nil {
		o.Summarize = heuristic.Summarize
	}
	r, err := ollama.NewReflective(c, &ollama.ReflectiveOptions{Model: model, Fallback: o.Sufficiency})
	if err != nil {
		return err
	}
	o.Sufficiency = r
	return nil
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
