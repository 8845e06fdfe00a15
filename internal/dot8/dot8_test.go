package dot8

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/internal/simdtest"
)

// ref is the scalar reference: int64 sums, no SIMD.
func ref(q []int16, rows []byte, stride, n int) []int32 {
	out := make([]int32, n)
	for i := range n {
		var s int64
		for j, c := range q {
			s += int64(int8(rows[i*stride+j])) * int64(c)
		}
		out[i] = int32(s)
	}
	return out
}

func randomCase(rng *rand.Rand, dims, stride, n int, extreme bool) ([]int16, []byte) {
	qmax := QueryMax(dims)
	q := make([]int16, dims)
	for j := range q {
		q[j] = int16(rng.IntN(2*qmax+1) - qmax)
		if extreme {
			q[j] = int16(qmax)
			if j%2 == 1 {
				q[j] = int16(-qmax)
			}
		}
	}
	rows := make([]byte, (n-1)*stride+dims)
	for i := range rows {
		rows[i] = byte(rng.IntN(256))
		if extreme {
			rows[i] = 0x81 // -127
			if (i%stride)%2 == 1 {
				rows[i] = 0x7f
			}
		}
	}
	return q, rows
}

// TestDotsMatchReference compares the kernel with the scalar reference
// for every length from 1 to 300 (bodies, tails and both), strides with
// and without padding, and the largest values that cannot overflow.
func TestDotsMatchReference(t *testing.T) {
	simdtest.Paths(t, &useAVX2, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for dims := 1; dims <= 300; dims++ {
			for _, pad := range []int{0, 1, 7, 16} {
				for _, extreme := range []bool{false, true} {
					stride, n := dims+pad, 1+rng.IntN(9)
					q, rows := randomCase(rng, dims, stride, n, extreme)
					out := make([]int32, n)
					if got := Dots(q, rows, stride, out); got != n {
						t.Fatalf("dims %d: computed %d rows, want %d", dims, got, n)
					}
					if want := ref(q, rows, stride, n); !slices.Equal(out, want) {
						t.Fatalf("dims %d stride %d extreme %v: got %v, want %v", dims, stride, extreme, out, want)
					}
				}
			}
		}
		// 65536 dims, the most vecfile allows: QueryMax keeps the sum exact.
		q, rows := randomCase(rng, 1<<16, 1<<16, 2, true)
		out := make([]int32, 2)
		Dots(q, rows, 1<<16, out)
		if want := ref(q, rows, 1<<16, 2); !slices.Equal(out, want) {
			t.Fatalf("65536 dims: got %v, want %v", out, want)
		}
	})
}

// TestDotsBounds: rows or out too short computes only the rows that fit,
// and bad shapes compute nothing, without panicking.
func TestDotsBounds(t *testing.T) {
	simdtest.Paths(t, &useAVX2, func(t *testing.T) {
		q := []int16{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}
		rows := make([]byte, 3*20)
		for i := range rows {
			rows[i] = byte(i)
		}
		cases := []struct {
			name   string
			q      []int16
			rows   []byte
			stride int
			out    int
			want   int
		}{
			{"all fit", q, rows, 20, 3, 3},
			{"out short", q, rows, 20, 2, 2},
			{"rows short", q, rows[:2*20+16], 20, 3, 2},
			{"last row ends at len(q)", q, rows[:2*20+17], 20, 3, 3},
			{"stride below len(q)", q, rows, 16, 3, 0},
			{"empty q", nil, rows, 20, 3, 0},
			{"empty rows", q, nil, 20, 3, 0},
			{"empty out", q, rows, 20, 0, 0},
		}
		for _, tc := range cases {
			out := make([]int32, tc.out)
			got := Dots(tc.q, tc.rows, tc.stride, out)
			if got != tc.want {
				t.Fatalf("%s: %d rows, want %d", tc.name, got, tc.want)
			}
			if want := ref(tc.q, tc.rows, tc.stride, got); !slices.Equal(out[:got], want) {
				t.Fatalf("%s: got %v, want %v", tc.name, out[:got], want)
			}
		}
	})
}

// refScaled is the reference of DotsScaled.
func refScaled(q []int16, rows []byte, stride, scaleOff, n int) []float32 {
	out := make([]float32, n)
	for i, d := range ref(q, rows, stride, n) {
		off := i*stride + scaleOff
		out[i] = float32(d) * math.Float32frombits(binary.LittleEndian.Uint32(rows[off:]))
	}
	return out
}

// TestDotsScaledMatchReference: the scaled sums equal float32(sum)*scale
// bit for bit, with the scale after the components (vecfile's companion
// layout) or inside the first chunk, for lengths with and without a
// tail, and 0 to 9 rows (the four-row body and the single rows).
func TestDotsScaledMatchReference(t *testing.T) {
	simdtest.Paths(t, &useAVX2, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		for dims := 1; dims <= 200; dims++ {
			for n := range 10 {
				chunks := (dims + 15) &^ 15
				stride := (dims + 12 + 15) &^ 15
				q, rows := randomCase(rng, chunks, stride, max(n, 1), false)
				rows = append(rows, make([]byte, stride)...) // room for the last row's scale
				for j := dims; j < chunks; j++ {
					q[j] = 0 // the query's padding, as vecfile builds it
				}
				for _, scaleOff := range []int{dims, 0} {
					for i := range max(n, 1) {
						sc := float32(rng.NormFloat64())
						binary.LittleEndian.PutUint32(rows[i*stride+scaleOff:], math.Float32bits(sc))
					}
					out := make([]float32, n)
					if got := DotsScaled(q, rows, stride, scaleOff, out); got != n {
						t.Fatalf("dims %d n %d: %d rows", dims, n, got)
					}
					if want := refScaled(q, rows, stride, scaleOff, n); !slices.Equal(out, want) {
						t.Fatalf("dims %d n %d scaleOff %d: got %v, want %v", dims, n, scaleOff, out, want)
					}
				}
			}
		}
		q := make([]int16, 16)
		rows := make([]byte, 3*32)
		for _, tc := range []struct {
			name            string
			stride, off, n  int
			rows, wantCount int
		}{
			{"fits", 32, 20, 3, 96, 3},
			{"scale past the last row", 32, 20, 3, 2*32 + 23, 2},
			{"scale past the stride", 20, 20, 3, 96, 0},
			{"negative offset", 32, -1, 3, 96, 0},
		} {
			out := make([]float32, tc.n)
			if got := DotsScaled(q, rows[:tc.rows], tc.stride, tc.off, out); got != tc.wantCount {
				t.Fatalf("%s: %d rows, want %d", tc.name, got, tc.wantCount)
			}
		}
	})
}

func FuzzDots(f *testing.F) {
	f.Add([]byte{1, 2, 3}, []byte{0x80, 0x7f, 3, 4, 5, 6}, uint8(3), uint8(0))
	f.Fuzz(func(t *testing.T, qb, rows []byte, stride, pad uint8) {
		q := make([]int16, len(qb)/2)
		qmax := QueryMax(max(len(q), 1))
		for i := range q {
			v := int(int16(uint16(qb[2*i]) | uint16(qb[2*i+1])<<8))
			q[i] = int16(max(-qmax, min(qmax, v)))
		}
		st := int(stride) + len(q)*int(pad%2)
		out := make([]int32, 8)
		avx := Dots(q, rows, st, out)
		want := ref(q, rows, st, avx)
		if !slices.Equal(out[:avx], want) {
			t.Fatalf("got %v, want %v", out[:avx], want)
		}
		saved := useAVX2
		useAVX2 = false
		defer func() { useAVX2 = saved }()
		gen := make([]int32, 8)
		if n := Dots(q, rows, st, gen); n != avx || !slices.Equal(gen[:n], out[:n]) {
			t.Fatalf("generic %v, avx2 %v", gen[:n], out[:avx])
		}
		// DotsScaled on the same rows, the scale at pad bytes in (within
		// or past the components), on both paths.
		off := int(pad)
		useAVX2 = saved
		fs := make([]float32, 8)
		m := DotsScaled(q, rows, st, off, fs)
		useAVX2 = false
		fg := make([]float32, 8)
		if mg := DotsScaled(q, rows, st, off, fg); mg != m || !slices.EqualFunc(fs[:m], fg[:m], sameFloat) {
			t.Fatalf("scaled: generic %v, avx2 %v", fg[:mg], fs[:m])
		}
		if want := refScaled(q, rows, st, off, m); !slices.EqualFunc(fs[:m], want, sameFloat) {
			t.Fatalf("scaled: got %v, want %v", fs[:m], want)
		}
	})
}

// BenchmarkDots is one 100-d query against 4096 rows of 112 bytes, the
// layout of vecfile's int8 companion.
func BenchmarkDots(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	q, rows := randomCase(rng, 112, 112, 4096, false)
	out := make([]int32, 4096)
	b.SetBytes(int64(len(rows)))
	for b.Loop() {
		Dots(q, rows, 112, out)
	}
}

// sameFloat is bit equality, so that NaN scales compare too.
func sameFloat(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
