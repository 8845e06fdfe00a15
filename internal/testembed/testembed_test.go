package testembed_test

import (
	"context"
	"math"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/testembed"
)

var _ engine.Embedder = testembed.Hash{}

func TestHashUnitAndDeterministic(t *testing.T) {
	h := testembed.Hash{ID: "t", Size: 8}
	for _, text := range []string{"Hello world", "", "!!!"} {
		a, _ := h.Embed(context.Background(), []string{text})
		b, _ := h.Embed(context.Background(), []string{text})
		var n float64
		for i, x := range a[0] {
			n += float64(x * x)
			if x != b[0][i] {
				t.Fatalf("Embed(%q) not deterministic", text)
			}
		}
		if math.Abs(n-1) > 1e-6 || len(a[0]) != 8 {
			t.Errorf("Embed(%q): len %d, norm² %v; want 8, 1", text, len(a[0]), n)
		}
	}
}
