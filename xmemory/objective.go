package xmemory

import (
	"math"
	"sort"

	"github.com/hmo-dev/hmo/internal/vecscan"
)

// Objective is the paper's guidance objective f(P) = SparsityScore(P) +
// SemScore(P) (Eq. 1) of a partition given as groups of unit vectors, one
// group per theme. Empty groups are ignored; an empty partition scores 0.
func Objective(groups [][][]float32) float64 {
	var gs [][][]float32
	for _, g := range groups {
		if len(g) > 0 {
			gs = append(gs, g)
		}
	}
	if len(gs) == 0 {
		return 0
	}
	return Sparsity(gs) + Semantic(gs)
}

// Sparsity is Eq. 2: N² / (K Σ n_k²), 1 when the themes are equal in size
// and smaller the more unbalanced they are.
func Sparsity(groups [][][]float32) float64 {
	var n, sq float64
	for _, g := range groups {
		n += float64(len(g))
		sq += float64(len(g) * len(g))
	}
	if sq == 0 {
		return 0
	}
	return n * n / (float64(len(groups)) * sq)
}

// madEpsilon keeps the bell of Eq. 3 finite when every theme's
// nearest-neighbour similarity is the same.
const madEpsilon = 1e-3

// Semantic is Eq. 3: the mean over themes of the cohesion (mean cosine of
// a theme's vectors to its centroid) times g(s_k), a bell over s_k, the
// theme's nearest-neighbour centroid similarity, centred on the median of
// the s_k with the median absolute deviation as its scale: it penalises
// both redundant and isolated themes. With one theme g is 1.
func Semantic(groups [][][]float32) float64 {
	k := len(groups)
	cents := make([][]float32, k)
	coh := make([]float64, k)
	for i, g := range groups {
		sum := make([]float32, len(g[0]))
		for _, v := range g {
			addTo(sum, v, 1)
		}
		cents[i] = unit(sum)
		for _, v := range g {
			coh[i] += cos(v, cents[i])
		}
		coh[i] /= float64(len(g))
	}
	if k == 1 {
		return coh[0]
	}
	s := make([]float64, k)
	for i := range cents {
		s[i] = math.Inf(-1)
		for j := range cents {
			if i != j {
				s[i] = math.Max(s[i], cos(cents[i], cents[j]))
			}
		}
	}
	m := median(s)
	dev := make([]float64, k)
	for i := range s {
		dev[i] = math.Abs(s[i] - m)
	}
	sigma := median(dev) + madEpsilon
	var out float64
	for i := range s {
		d := s[i] - m
		out += coh[i] * math.Exp(-d*d/(2*sigma*sigma))
	}
	return out / float64(k)
}

func median(x []float64) float64 {
	c := append([]float64(nil), x...)
	sort.Float64s(c)
	n := len(c)
	if n%2 == 1 {
		return c[n/2]
	}
	return (c[n/2-1] + c[n/2]) / 2
}

// kmeans clusters unit vectors into k parts by spherical k-means with a
// deterministic farthest-point start; it returns the non-empty parts as
// index lists.
func kmeans(vecs [][]float32, k int) [][]int {
	cents := [][]float32{vecs[0]}
	for len(cents) < k {
		far, farSim := 0, math.Inf(1)
		for i, v := range vecs {
			best := math.Inf(-1)
			for _, c := range cents {
				best = math.Max(best, cos(v, c))
			}
			if best < farSim {
				far, farSim = i, best
			}
		}
		cents = append(cents, vecs[far])
	}
	assign := make([]int, len(vecs))
	for iter := 0; iter < 10; iter++ {
		changed := false
		for i, v := range vecs {
			best, bestSim := 0, math.Inf(-1)
			for j, c := range cents {
				if s := cos(v, c); s > bestSim {
					best, bestSim = j, s
				}
			}
			if assign[i] != best || iter == 0 {
				changed = changed || assign[i] != best
				assign[i] = best
			}
		}
		sums := make([][]float32, k)
		for j := range sums {
			sums[j] = make([]float32, len(vecs[0]))
		}
		for i, v := range vecs {
			addTo(sums[assign[i]], v, 1)
		}
		for j := range cents {
			cents[j] = unit(sums[j])
		}
		if !changed && iter > 0 {
			break
		}
	}
	parts := make([][]int, k)
	for i, a := range assign {
		parts[a] = append(parts[a], i)
	}
	out := parts[:0]
	for _, p := range parts {
		if len(p) > 0 {
			out = append(out, p)
		}
	}
	if len(out) == 1 { // degenerate (identical vectors): halve by order
		h := len(out[0]) / 2
		out = [][]int{out[0][:h], out[0][h:]}
	}
	return out
}

func addTo(sum, v []float32, sign float32) {
	for i := range sum {
		if i < len(v) {
			sum[i] += sign * v[i]
		}
	}
}

func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	inv := 1 / math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// cos is the cosine of a and b (0 when either is zero or their lengths
// differ), from vecscan's SIMD dot products.
func cos(a, b []float32) float64 {
	d := float64(vecscan.Dot(a, b))
	if d == 0 {
		return 0
	}
	na, nb := float64(vecscan.Dot(a, a)), float64(vecscan.Dot(b, b))
	if na == 0 || nb == 0 {
		return 0
	}
	return d / math.Sqrt(na*nb)
}
