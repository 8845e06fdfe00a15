package engine_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/engine"
)

// TestDecodeUnitIsDecodeNormalize checks the rescoring's one-pass decode
// of a stored vector into its unit vector against the decode and the
// normalisation it replaces, bit for bit: random vectors of several
// scales, and components that are zero, subnormal, huge, infinite or
// NaN, and byte strings of other lengths.
func TestDecodeUnitIsDecodeNormalize(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 1))
	enc := func(v []float32) []byte {
		b := make([]byte, 4*len(v))
		for i, c := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(c))
		}
		return b
	}
	var cases [][]float32
	for _, dims := range []int{1, 3, 100, 384} {
		for _, scale := range []float64{1, 1e-30, 1e-42, 1e30, 3e38} {
			for range 50 {
				v := make([]float32, dims)
				for i := range v {
					v[i] = float32(rng.NormFloat64() * scale)
				}
				cases = append(cases, v)
			}
		}
		zero := make([]float32, dims)
		cases = append(cases, zero)
		for _, odd := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.SmallestNonzeroFloat32, math.MaxFloat32, 0} {
			v := make([]float32, dims)
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
			v[rng.IntN(dims)] = odd
			cases = append(cases, v)
			one := make([]float32, dims)
			one[rng.IntN(dims)] = odd
			cases = append(cases, one)
		}
	}
	for n, v := range cases {
		b := enc(v)
		want, wok := engine.DecodeNormalize(b, len(v))
		got := make([]float32, len(v))
		gok := engine.DecodeUnit(b, got)
		if gok != wok {
			t.Fatalf("case %d (%v): ok %v, want %v", n, v[:min(4, len(v))], gok, wok)
		}
		if wok && !slices.EqualFunc(got, want, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
			t.Fatalf("case %d: %v, want %v", n, got[:min(4, len(v))], want[:min(4, len(v))])
		}
		// Another length: no vector of these dimensions.
		if engine.DecodeUnit(b, make([]float32, len(v)+1)) {
			t.Fatalf("case %d: %d bytes decoded into %d components", n, len(b), len(v)+1)
		}
		if len(v) > 1 && engine.DecodeUnit(b, got[:len(v)-1]) {
			t.Fatalf("case %d: %d bytes decoded into %d components", n, len(b), len(v)-1)
		}
	}
}
