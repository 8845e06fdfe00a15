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

// TestClipIsRuneCut checks clip against the cut it replaced: the first
// runes of []rune(s), invalid bytes counted as one rune each.
func TestClipIsRuneCut(t *testing.T) {
	ref := func(s string, n int) string {
		r := []rune(s)
		if len(r) <= n {
			return s
		}
		return string(r[:n])
	}
	for _, s := range []string{"", "abc", "abcd", "héllo", "日本語テキスト", "a\xffb", "\xff\xfe\xfd\xfc", "ab\xffcd", "é\xff"} {
		for n := 0; n <= 6; n++ {
			if got, want := clip(s, n), ref(s, n); got != want {
				t.Errorf("clip(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}
