// Package dot4 is the kernel of hmo's 4-bit vector pass: an int8 query
// against many rows of unsigned 4-bit codes, with AVX2 on amd64 CPUs that
// have it (VPMADDUBSW) and portable Go elsewhere, chosen once at run
// time. It holds no state and is safe for concurrent use.
//
// A row holds two codes a byte: byte j has component 2j in its low
// nibble and component 2j+1 in its high nibble. The query is given split
// the same way (Split): its even components, then its odd ones.
package dot4

import (
	"encoding/binary"
	"math"
)

// Chunk is the bytes of a row the kernel reads at a time: a row's codes
// are read in whole chunks, so the query is padded with zeros up to a
// multiple of it (the bytes past the codes then count for nothing).
const Chunk = 32

// Split returns the query q (int8 components, at most 127 in magnitude)
// in the kernel's layout for rows of bytes code bytes (bytes a multiple
// of Chunk, at least (len(q)+1)/2): bytes even components (q[0], q[2],
// ...) then bytes odd ones, zero-padded. It returns nil when bytes is
// too small or not a multiple of Chunk.
func Split(q []int8, bytes int) []int8 {
	if bytes <= 0 || bytes%Chunk != 0 || bytes < (len(q)+1)/2 {
		return nil
	}
	out := make([]int8, 2*bytes)
	for i, c := range q {
		out[(i&1)*bytes+i/2] = c
	}
	return out
}

// Dots sets out[i] to the dot product of the split query q (Split) with
// the codes of row i of rows, whose rows start stride bytes apart: row i
// is rows[i*stride : i*stride+len(q)/2]. It computes the rows that fit
// in rows and out and returns their count; it never panics. The sums are
// exact: at most 15*127 per component.
func Dots(q []int8, rows []byte, stride int, out []int32) int {
	b := len(q) / 2
	if b == 0 || len(q) != 2*b || b%Chunk != 0 || stride < b || len(rows) < b {
		return 0
	}
	n := min(len(out), (len(rows)-b)/stride+1)
	if n == 0 {
		return 0
	}
	if useAVX2 {
		dotsAVX2(&q[0], b/Chunk, &rows[0], stride, &out[0], n)
		return n
	}
	even, odd := q[:b], q[b:]
	for i := range out[:n] {
		r := rows[i*stride : i*stride+b]
		var s int32
		for j, c := range r {
			s += int32(c&15)*int32(even[j]) + int32(c>>4)*int32(odd[j])
		}
		out[i] = s
	}
	return n
}

// DotsScaled sets out[i] to lo_i*qsum + step_i*d_i in float32 (each
// product rounded to float32, then the sum), d_i the dot product Dots
// computes for row i and lo_i, step_i the little-endian float32s at bytes
// fieldOff and fieldOff+4 of row i: a row's estimate of its dot product
// with the query when its components are lo + code*step. It computes the
// rows that fit in rows and out (each needs its codes and fieldOff+8
// bytes) and returns their count; it never panics.
func DotsScaled(q []int8, rows []byte, stride, fieldOff int, qsum float32, out []float32) int {
	b := len(q) / 2
	need := max(b, fieldOff+8)
	if b == 0 || len(q) != 2*b || b%Chunk != 0 || fieldOff < 0 || stride < need || len(rows) < need {
		return 0
	}
	n := min(len(out), (len(rows)-need)/stride+1)
	if n == 0 {
		return 0
	}
	if useAVX2 {
		dotsScaledAVX2(&q[0], b/Chunk, &rows[0], stride, fieldOff, qsum, &out[0], n)
		return n
	}
	d := make([]int32, n)
	Dots(q, rows, stride, d)
	for i, s := range d {
		r := rows[i*stride+fieldOff : i*stride+fieldOff+8]
		lo := math.Float32frombits(binary.LittleEndian.Uint32(r))
		step := math.Float32frombits(binary.LittleEndian.Uint32(r[4:]))
		out[i] = float32(lo*qsum) + float32(step*float32(s))
	}
	return n
}

// Generic reports whether Dots runs the portable Go code on this CPU.
func Generic() bool { return !useAVX2 }
