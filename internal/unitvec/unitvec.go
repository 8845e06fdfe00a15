// Package unitvec decodes a stored vector into its unit vector: the
// rescoring of the vector scan's candidates reads a hundred or more of
// them a question. The components are copied and squared four at a time
// and scaled eight at a time with AVX on amd64 CPUs that have it
// (chosen once at run time), and by portable Go elsewhere; either way
// the result is bit for bit the scalar loop's: the squares are
// summed in float64 one after the other, in order, and each component is
// converted to float64, multiplied by the inverse of the norm and
// rounded back to float32 by the same IEEE operations. It holds no state
// and is safe for concurrent use.
package unitvec

import (
	"encoding/binary"
	"math"
)

// Decode decodes b, 4*len(v) bytes of little-endian float32 components,
// into v divided by its norm: each component times the float64 inverse
// of the square root of the float64 sum of the squares, taken in order.
// It reports false, leaving v undefined, when b has another length or
// the vector has no direction (a component not finite, or all zero: the
// float64 sum of the squares of float32 components is finite unless one
// of them is not).
func Decode(b []byte, v []float32) bool {
	if len(b) != 4*len(v) {
		return false
	}
	var sum float64
	i := 0
	if useAVX && len(v) >= 4 {
		i = len(v) &^ 3
		sum = squaresAVX(&b[0], &v[0], i)
	}
	b = b[:4*len(v)]
	for ; i < len(v); i++ {
		c := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i : 4*i+4]))
		v[i] = c
		f := float64(c)
		sum += f * f
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return false
	}
	inv := 1 / math.Sqrt(sum)
	i = 0
	if useAVX && len(v) >= 8 {
		i = len(v) &^ 7
		scaleAVX(&v[0], i, inv)
	}
	for ; i < len(v); i++ {
		v[i] = float32(float64(v[i]) * inv)
	}
	return true
}
