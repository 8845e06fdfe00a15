// Package testembed provides a deterministic test double for
// engine.Embedder: a normalised bag of hashed words. It is for tests only;
// the product's embedders live in localllm/static and localllm/ollama.
package testembed

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// Hash embeds text as counts of its lowercased words hashed into Dims
// buckets, normalised to unit length (text without words maps to the
// first axis). Safe for concurrent use.
type Hash struct {
	ID   string // the Name it reports
	Size int    // the Dims it reports
}

// Name implements engine.Embedder.
func (h Hash) Name() string { return h.ID }

// Dims implements engine.Embedder.
func (h Hash) Dims() int { return h.Size }

// Embed implements engine.Embedder.
func (h Hash) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = h.vector(t)
	}
	return out, nil
}

func (h Hash) vector(t string) []float32 {
	v := make([]float32, h.Size)
	words := strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		f := fnv.New32a()
		f.Write([]byte(w))
		v[f.Sum32()%uint32(h.Size)]++
	}
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	if n == 0 {
		v[0], n = 1, 1
	}
	for j := range v {
		v[j] /= float32(math.Sqrt(n))
	}
	return v
}
