package engine

import (
	"context"
	"sync"
)

// wordCacheCap bounds the word vectors kept for the wordsim stage.
const wordCacheCap = 1 << 17

// wordCache keeps single-word embeddings for the pipeline's soft word
// match. Safe for concurrent use.
type wordCache struct {
	mu sync.Mutex // guards m
	m  map[string][]float32
}

// wordVectors embeds words with the store's embedder, from the cache
// where it can.
func (e *Engine) wordVectors(words []string) ([][]float32, error) {
	c := &e.words
	out := make([][]float32, len(words))
	var missing []string
	var at []int
	c.mu.Lock()
	for i, w := range words {
		if v, ok := c.m[w]; ok {
			out[i] = v
		} else {
			missing, at = append(missing, w), append(at, i)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	vecs, err := e.opts.Embedder.Embed(context.Background(), missing)
	if err != nil || len(vecs) != len(missing) {
		return out, nil // no soft match for these words rather than no answer
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m)+len(missing) > wordCacheCap {
		c.m = make(map[string][]float32, 4096)
	}
	for j, i := range at {
		out[i] = vecs[j]
		c.m[missing[j]] = vecs[j]
	}
	return out, nil
}
