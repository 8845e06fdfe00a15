package persona_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/persona"
)

func randomVec(rng *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// BenchmarkObserve: one record of about 20 words, with a full term table
// (new words every record keep it pruning).
func BenchmarkObserve(b *testing.B) {
	for _, dims := range []int{100, 768} {
		b.Run(fmt.Sprintf("dims=%d", dims), func(b *testing.B) {
			p := newPersona(b, nil)
			rng := rand.New(rand.NewPCG(1, 2))
			vecs := make([][]float32, 64)
			for i := range vecs {
				vecs[i] = randomVec(rng, dims)
			}
			i := 0
			for b.Loop() {
				text := fmt.Sprintf("I went hiking near lake w%d with my sister and we talked about pottery classes, marathon w%d training and the w%d wedding", i, i+1, i%97)
				if _, _, err := p.Observe(vecs[i%len(vecs)], float64(i%11), text, t0.Add(time.Duration(i)*time.Minute)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(p.Firings()), "firings")
		})
	}
}

func BenchmarkAlignment(b *testing.B) {
	p := trained(b, nil, 50, 1)
	v := randomVec(rand.New(rand.NewPCG(3, 4)), 16)
	for b.Loop() {
		p.Alignment(v)
	}
}

func BenchmarkMarshal(b *testing.B) {
	p := newPersona(b, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 { // fills the 1024-term table
		observe(b, p, randomVec(rng, 100), 8, fmt.Sprintf("words w%d x%d y%d", i, i*7, i*13), t0)
	}
	data, _ := p.MarshalBinary()
	b.Run("marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := p.MarshalBinary(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(data)), "bytes")
	})
	b.Run("unmarshal", func(b *testing.B) {
		q := newPersona(b, &persona.Options{})
		for b.Loop() {
			if err := q.UnmarshalBinary(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
