package unitvec

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hmo-dev/hmo/internal/simdtest"
)

// ref is Decode one component at a time (engine's decodeUnit as it was).
func ref(b []byte, v []float32) bool {
	if len(b) != 4*len(v) {
		return false
	}
	var sum float64
	for i := range v {
		c := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i : 4*i+4]))
		v[i] = c
		f := float64(c)
		sum += f * f
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return false
	}
	inv := 1 / math.Sqrt(sum)
	for i, c := range v {
		v[i] = float32(float64(c) * inv)
	}
	return true
}

func encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, c := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(c))
	}
	return b
}

// same checks Decode against ref on b into vectors of n components: the
// same answer and, when true, the same bits.
func same(t *testing.T, b []byte, n int) {
	t.Helper()
	got, want := make([]float32, n), make([]float32, n)
	okGot, okWant := Decode(b, got), ref(b, want)
	if okGot != okWant {
		t.Fatalf("%d bytes into %d: Decode %t, scalar %t", len(b), n, okGot, okWant)
	}
	if !okWant {
		return
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%d components: component %d is %v (%#x), scalar %v (%#x)", n, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// TestDecodeIsScalar: vectors of every length up to 300 and a few longer,
// with components of every size (embedder-like, tiny, huge, subnormal,
// zero and negative zero, exact powers of two), one not finite (NaN,
// either infinity) anywhere, all zero, sums that overflow, and byte
// lengths that do not match: the answer and every bit of the vector
// equal those of the scalar loop, with AVX and without.
func TestDecodeIsScalar(t *testing.T) {
	simdtest.Paths(t, &useAVX, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		lengths := []int{}
		for n := range 301 {
			lengths = append(lengths, n)
		}
		lengths = append(lengths, 384, 768, 1023, 1536)
		gens := []func() float32{
			func() float32 { return float32(rng.NormFloat64() * 0.1) },
			func() float32 { return float32(rng.NormFloat64()) * 1e-20 },
			func() float32 { return float32(rng.NormFloat64()) * 1e30 },
			func() float32 { return math.Float32frombits(rng.Uint32() & 0x807fffff) }, // subnormal or zero
			func() float32 { return math.Float32frombits(rng.Uint32()&0x80000000 | 0x3f800000) },
			func() float32 { return math.Float32frombits(rng.Uint32()&^0x7f800000 | uint32(rng.IntN(255))<<23) }, // any finite
		}
		for _, n := range lengths {
			for _, gen := range gens {
				v := make([]float32, n)
				for i := range v {
					v[i] = gen()
				}
				same(t, encode(v), n)
				if n > 0 {
					for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0} {
						w := append([]float32(nil), v...)
						w[rng.IntN(n)] = bad
						same(t, encode(w), n)
					}
					same(t, encode(make([]float32, n)), n) // no direction
					same(t, encode(v)[:4*n-1], n)          // a byte short
					same(t, append(encode(v), 0, 0, 0, 0), n)
				}
			}
		}
	})
}

// FuzzDecode: any bytes into any number of components, as the scalar
// loop decodes them.
func FuzzDecode(f *testing.F) {
	f.Add(encode([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9}), 9)
	f.Add(encode([]float32{0, 0, 0, 0}), 4)
	f.Add([]byte{1, 2, 3}, 1)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		if n < 0 || n > 4096 {
			return
		}
		same(t, b, n)
		if len(b)%4 == 0 {
			same(t, b, len(b)/4)
		}
	})
}

// TestSquaresInOrder: the AVX sum of squares is the scalar one to the bit
// (the squares added one at a time, in order) on components whose
// squares differ by up to 2^40, where adding them in another order
// rounds differently, and the components are copied as they are.
func TestSquaresInOrder(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX on this CPU")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 4; n <= 400; n += 4 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(math.Ldexp(1+rng.Float64(), rng.IntN(40)-20))
		}
		b := encode(v)
		var want float64
		for _, c := range v {
			want += float64(c) * float64(c)
		}
		got := make([]float32, n)
		if sum := squaresAVX(&b[0], &got[0], n); math.Float64bits(sum) != math.Float64bits(want) {
			t.Fatalf("%d components: sum %v, scalar %v", n, sum, want)
		}
		for i := range v {
			if math.Float32bits(got[i]) != math.Float32bits(v[i]) {
				t.Fatalf("%d components: copy %d is %v, want %v", n, i, got[i], v[i])
			}
		}
	}
}
