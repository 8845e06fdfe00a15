// Package dot8 is the integer dot-product kernel of hmo's quantised vector
// scan: an int16 query against many int8 rows, with AVX2 on amd64 CPUs
// that have it (VPMOVSXBW, VPMADDWD, VPADDD) and portable Go elsewhere,
// chosen once at run time. It holds no state and is safe for concurrent
// use.
package dot8

import (
	"encoding/binary"
	"math"
)

// Dots sets out[i] to the dot product of q with the first len(q) bytes,
// read as int8, of row i of rows, whose rows start stride bytes apart:
// row i is rows[i*stride : i*stride+len(q)]. It computes the rows that
// fit in rows and out and returns their count; it never panics. The sum
// is exact as long as it fits an int32: len(q) * 127 * max|q| < 2^31
// (QueryMax gives the bound on max|q|).
func Dots(q []int16, rows []byte, stride int, out []int32) int {
	n := len(out)
	if len(q) == 0 || stride < len(q) {
		n = 0
	} else if len(rows) < len(q) {
		n = 0
	} else {
		n = min(n, (len(rows)-len(q))/stride+1)
	}
	if n == 0 {
		return 0
	}
	body := len(q) &^ 15
	if body > 0 && useAVX2 {
		dotsAVX2(&q[0], body/16, &rows[0], stride, &out[0], n)
	} else {
		body = 0
		clear(out[:n])
	}
	if body < len(q) {
		tail(q[body:], rows[body:], stride, out[:n])
	}
	return n
}

// DotsScaled sets out[i] to the dot product of Dots, as a float32, times
// the float32 stored little-endian at byte scaleOff of row i (a per-row
// scale kept beside the components): exactly float32(dot) * scale. It
// computes the rows that fit in rows and out (each row needs len(q) and
// scaleOff+4 bytes) and returns their count; it never panics.
func DotsScaled(q []int16, rows []byte, stride, scaleOff int, out []float32) int {
	need := max(len(q), scaleOff+4)
	n := len(out)
	if len(q) == 0 || scaleOff < 0 || stride < need || len(rows) < need {
		return 0
	}
	n = min(n, (len(rows)-need)/stride+1)
	if n == 0 {
		return 0
	}
	body := len(q) &^ 15
	if body == len(q) && useAVX2 {
		dotsScaledAVX2(&q[0], body/16, &rows[0], stride, scaleOff, &out[0], n)
		return n
	}
	ints := make([]int32, n)
	Dots(q, rows, stride, ints)
	for i, d := range ints {
		off := i*stride + scaleOff
		out[i] = float32(d) * math.Float32frombits(binary.LittleEndian.Uint32(rows[off:off+4]))
	}
	return n
}

// tail adds to out[i] the dot product of q with row i of rows.
func tail(q []int16, rows []byte, stride int, out []int32) {
	for i := range out {
		r := rows[i*stride : i*stride+len(q)]
		var s int32
		for j, b := range r {
			s += int32(int8(b)) * int32(q[j])
		}
		out[i] += s
	}
}

// QueryMax is the largest query component magnitude for which Dots
// cannot overflow on rows of dims int8 components: at most 32767.
func QueryMax(dims int) int {
	if dims <= 0 {
		return 32767
	}
	return min(32767, (1<<31-1)/(dims*127))
}

// Generic reports whether Dots runs the portable Go code on this CPU.
func Generic() bool { return !useAVX2 }
