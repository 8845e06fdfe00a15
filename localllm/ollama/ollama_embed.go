package ollama

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/hmo-dev/hmo/engine"
)

// EmbedderPrefix starts the name of every Ollama embedder:
// "ollama:" followed by the model.
const EmbedderPrefix = "ollama:"

var _ engine.Embedder = (*Embedder)(nil)

// Embedder embeds text with an Ollama model through /api/embed, in
// batches, and normalises the vectors to unit length. It is safe for
// concurrent use.
type Embedder struct {
	c     *Ollama
	model string
	dims  int
}

// NewEmbedder returns an embedder for model. With dims 0 it asks the
// server once to detect the model's dimensions; a store records them, and
// reopening it passes them back so that no call is needed.
func NewEmbedder(ctx context.Context, c *Ollama, model string, dims int) (*Embedder, error) {
	model = strings.TrimSpace(model)
	if model == "" {
		model = DefaultEmbedModel
	}
	if dims < 0 {
		return nil, fmt.Errorf("%w: %d dimensions", ErrOptions, dims)
	}
	e := &Embedder{c: c, model: model, dims: dims}
	if dims == 0 {
		vecs, err := e.embedBatch(ctx, []string{"dimension probe"})
		if err != nil {
			return nil, err
		}
		e.dims = len(vecs[0])
	}
	return e, nil
}

// ParseEmbedderName splits "ollama:model" into the model; ok is false for
// other names.
func ParseEmbedderName(name string) (model string, ok bool) {
	return strings.CutPrefix(name, EmbedderPrefix)
}

// Name implements engine.Embedder: "ollama:" and the model.
func (e *Embedder) Name() string { return EmbedderPrefix + e.model }

// Dims implements engine.Embedder.
func (e *Embedder) Dims() int { return e.dims }

// Model is the Ollama model name.
func (e *Embedder) Model() string { return e.model }

// Embed implements engine.Embedder.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += DefaultEmbedBatch {
		vecs, err := e.embedBatch(ctx, texts[start:min(start+DefaultEmbedBatch, len(texts))])
		if err != nil {
			return nil, err
		}
		for _, v := range vecs {
			if len(v) != e.dims {
				return nil, fmt.Errorf("%w: embed: %s returned %d dimensions, want %d", engine.ErrModelOutput, e.model, len(v), e.dims)
			}
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (e *Embedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	var vecs [][]float32
	err := e.c.call(ctx, "embed with "+e.model, func(ctx context.Context) error {
		resp, err := e.c.api.Embed(ctx, &api.EmbedRequest{Model: e.model, Input: texts})
		if err != nil {
			return err
		}
		vecs = resp.Embeddings
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("%w: embed: %s returned %d vectors for %d texts", engine.ErrModelOutput, e.model, len(vecs), len(texts))
	}
	for i, v := range vecs {
		if err := normalize(v); err != nil {
			return nil, fmt.Errorf("%w: embed: %s, text %d: %v", engine.ErrModelOutput, e.model, i, err)
		}
	}
	return vecs, nil
}

// normalize scales v to unit length in place; an empty, zero or
// non-finite vector is an error.
func normalize(v []float32) error {
	if len(v) == 0 {
		return fmt.Errorf("empty vector")
	}
	var s float64
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("non-finite component")
		}
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return fmt.Errorf("zero vector")
	}
	inv := 1 / math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return nil
}
