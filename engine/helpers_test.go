package engine_test

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
	"github.com/hmo-dev/hmo/hnsw"
)

// hashEmbedder is a test double: a bag of hashed words, normalised.
type hashEmbedder struct {
	name string
	dims int
}

func (h hashEmbedder) Name() string { return h.name }
func (h hashEmbedder) Dims() int    { return h.dims }

func (h hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, h.dims)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			f := fnv.New32a()
			f.Write([]byte(w))
			v[f.Sum32()%uint32(h.dims)]++
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
		out[i] = v
	}
	return out, nil
}

// fakeClock is an injected clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

func testOptions(clock *fakeClock) *engine.Options {
	return &engine.Options{
		Embedder: hashEmbedder{name: "test:hash/64", dims: 64},
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
