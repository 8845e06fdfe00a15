package xmemory_test

import (
	"math/rand/v2"
	"testing"

	"github.com/hmo-dev/hmo/xmemory"
)

// BenchmarkBuild builds the partition of one LoCoMo-sized conversation
// (600 facts, 100-d vectors around 40 topics); ns/op divided by 600 is
// the cost per record of xMemory's themes.
func BenchmarkBuild(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	centres := make([][]float32, 40)
	for i := range centres {
		centres[i] = make([]float32, 100)
		for j := range centres[i] {
			centres[i][j] = float32(rng.NormFloat64())
		}
	}
	vecs := clustered(rng, centres, 600)
	for i := range vecs {
		for j := range vecs[i] {
			vecs[i][j] += float32(rng.NormFloat64() * 0.5)
		}
	}
	b.ResetTimer()
	for range b.N {
		p, _ := xmemory.New(100, xmemory.Options{})
		for i, v := range vecs {
			if err := p.Add(uint64(i+1), v); err != nil {
				b.Fatal(err)
			}
		}
		p.Maintain()
	}
}
