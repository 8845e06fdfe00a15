package hnsw

import (
	"fmt"
	"math"

	"github.com/viterin/vek/vek32"
)

// arenaVectors is the number of vectors carved from one allocation.
const arenaVectors = 1024

// checkVector reports whether v can be indexed or searched: it has dims
// components, all finite, not all zero. It returns v's Euclidean norm.
func checkVector(v []float32, dims int) (float64, error) {
	if len(v) != dims {
		return 0, fmt.Errorf("%w: got %d, want %d", ErrDimension, len(v), dims)
	}
	var sum float64
	for i, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("%w: component %d is %v", ErrNotFinite, i, x)
		}
		sum += f * f
	}
	norm := math.Sqrt(sum)
	if norm == 0 {
		return 0, ErrZeroVector
	}
	return norm, nil
}

// normalize writes v scaled to unit length into dst, which has len(v).
func normalize(dst, v []float32, norm float64) {
	inv := 1 / norm
	for i, x := range v {
		dst[i] = float32(float64(x) * inv)
	}
}

// dot is the inner product of two unit vectors, their cosine similarity.
func dot(a, b []float32) float32 {
	return vek32.Dot(a, b)
}

// arena hands out fixed-length vectors carved from larger allocations, so
// that many small vectors cost few allocations. It never moves a vector:
// the graph keeps references to them.
type arena struct {
	dims int
	free []float32
}

// alloc returns a zeroed slice of a.dims floats with no spare capacity.
func (a *arena) alloc() []float32 {
	if len(a.free) < a.dims {
		a.free = make([]float32, a.dims*arenaVectors)
	}
	v := a.free[:a.dims:a.dims]
	a.free = a.free[a.dims:]
	return v
}
