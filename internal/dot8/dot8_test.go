package dot8

import (
	"math/rand/v2"
	"slices"
	"testing"
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

// paths runs fn with each kernel this machine has: AVX2 (where the CPU
// has it) and the portable Go code.
func paths(t *testing.T, fn func(t *testing.T)) {
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	for _, avx := range []bool{true, false} {
		if avx && !saved {
			t.Log("no AVX2 on this CPU: portable path only")
			continue
		}
		useAVX2 = avx
		name := "generic"
		if avx {
			name = "avx2"
		}
		t.Run(name, fn)
	}
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
	paths(t, func(t *testing.T) {
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
	paths(t, func(t *testing.T) {
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
