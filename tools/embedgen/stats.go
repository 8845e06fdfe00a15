package main

import (
	"fmt"
	"io"
	"math"
	"slices"
)

// quantStats summarises the error of one quantisation scheme over a set
// of vectors.
type quantStats struct {
	meanRelErr float64 // mean of |v - v̂| / |v|
	p99RelErr  float64
	meanCos    float64 // mean cosine between v and v̂
	minCos     float64
}

func (s quantStats) String() string {
	return fmt.Sprintf("relative L2 error mean %.4f p99 %.4f; cosine mean %.6f min %.6f",
		s.meanRelErr, s.p99RelErr, s.meanCos, s.minCos)
}

// measure compares every vector with its reconstruction.
func measure(vs, approx [][]float64) quantStats {
	rel := make([]float64, len(vs))
	st := quantStats{minCos: 1}
	for i, v := range vs {
		var d2, n2, dot, a2 float64
		for j, x := range v {
			y := approx[i][j]
			d2 += (x - y) * (x - y)
			n2 += x * x
			a2 += y * y
			dot += x * y
		}
		if n2 == 0 {
			continue
		}
		rel[i] = math.Sqrt(d2 / n2)
		c := 1.0
		if a2 > 0 {
			c = dot / math.Sqrt(n2*a2)
		}
		st.meanCos += c
		st.minCos = math.Min(st.minCos, c)
		st.meanRelErr += rel[i]
	}
	st.meanCos /= float64(len(vs))
	st.meanRelErr /= float64(len(vs))
	slices.Sort(rel)
	st.p99RelErr = rel[len(rel)*99/100]
	return st
}

// perVector reconstructs the vectors as the table stores them.
func perVector(vs [][]float64) [][]float64 {
	out := make([][]float64, len(vs))
	for i, v := range vs {
		q := quantizeVector(v)
		out[i] = make([]float64, len(v))
		for j, x := range q.q {
			out[i][j] = float64(q.scale) * float64(x)
		}
	}
	return out
}

// perDimension reconstructs the vectors with one scale per dimension (the
// largest absolute value of that dimension over all vectors maps to ±127),
// the alternative the table does not use.
func perDimension(vs [][]float64) [][]float64 {
	if len(vs) == 0 {
		return nil
	}
	scale := make([]float64, len(vs[0]))
	for _, v := range vs {
		for j, x := range v {
			scale[j] = math.Max(scale[j], math.Abs(x)/127)
		}
	}
	out := make([][]float64, len(vs))
	for i, v := range vs {
		out[i] = make([]float64, len(v))
		for j, x := range v {
			if scale[j] > 0 {
				out[i][j] = scale[j] * math.Round(x/scale[j])
			}
		}
	}
	return out
}

// reportQuantError prints the error of both schemes.
func reportQuantError(w io.Writer, entries []entry) {
	vs := make([][]float64, len(entries))
	for i, e := range entries {
		vs[i] = e.vector
	}
	fmt.Fprintf(w, "int8, scale per vector (stored): %v\n", measure(vs, perVector(vs)))
	fmt.Fprintf(w, "int8, scale per dimension:       %v\n", measure(vs, perDimension(vs)))
}
