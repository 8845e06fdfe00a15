package segtree

import (
	"math"
	"math/rand/v2"
	"testing"
)

// centroidCos must give the very bits of cos(unit(sum), b), which the
// tree's choices (attach, representative) compared before.
func TestCentroidCosIsCosOfUnit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vec := func(n int, scale float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * scale)
		}
		return v
	}
	cases := []struct {
		name string
		sum  []float32
		b    []float32
	}{
		{"empty sum", nil, vec(8, 1)},
		{"zero sum", make([]float32, 8), vec(8, 1)},
		{"zero b", vec(8, 1), make([]float32, 8)},
		{"lengths differ", vec(8, 1), vec(7, 1)},
		{"tiny", vec(100, 1e-20), vec(100, 1)},
		{"huge", vec(100, 1e18), vec(100, 1e-3)},
	}
	for i := range 2000 {
		cases = append(cases, struct {
			name string
			sum  []float32
			b    []float32
		}{"random", vec(1+i%130, float64(1+i%7)), vec(1+i%130, 1)})
	}
	for _, c := range cases {
		got, want := centroidCos(c.sum, c.b), cos(unit(c.sum), c.b)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%s: centroidCos %v, cos(unit) %v", c.name, got, want)
		}
	}
}
