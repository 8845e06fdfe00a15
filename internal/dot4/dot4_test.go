package dot4

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/internal/simdtest"
)

// ref is the scalar reference over the unsplit query.
func ref(q []int8, rows []byte, stride, n int) []int32 {
	out := make([]int32, n)
	for i := range n {
		var s int64
		for j, c := range q {
			b := rows[i*stride+j/2]
			code := b & 15
			if j%2 == 1 {
				code = b >> 4
			}
			s += int64(code) * int64(c)
		}
		out[i] = int32(s)
	}
	return out
}

func TestDotsMatchReference(t *testing.T) {
	simdtest.Paths(t, &useAVX2, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, tc := range []struct {
			dims, n int
			extreme bool
		}{
			{1, 1, false}, {63, 5, false}, {64, 7, false}, {65, 3, false}, {100, 37, false},
			{100, 37, true}, {128, 4, true}, {384, 9, false}, {1000, 3, true},
		} {
			bytes := ((tc.dims+1)/2 + Chunk - 1) / Chunk * Chunk
			stride := bytes + 16 // room for other fields, as a real row has
			q := make([]int8, tc.dims)
			for j := range q {
				q[j] = int8(rng.IntN(255) - 127)
				if tc.extreme {
					q[j] = 127
					if j%3 == 1 {
						q[j] = -127
					}
				}
			}
			rows := make([]byte, tc.n*stride)
			for i := range rows {
				rows[i] = byte(rng.IntN(256))
				if tc.extreme {
					rows[i] = 0xff
				}
			}
			// The bytes past the codes of each row hold other data: the
			// zero padding of the query must make them count for nothing.
			sq := Split(q, bytes)
			out := make([]int32, tc.n)
			if got := Dots(sq, rows, stride, out); got != tc.n {
				t.Fatalf("dims %d: computed %d rows, want %d", tc.dims, got, tc.n)
			}
			if want := ref(q, rows, stride, tc.n); !slices.Equal(out, want) {
				t.Fatalf("dims %d extreme %v: got %v, want %v", tc.dims, tc.extreme, out, want)
			}
		}
	})
}

func TestDotsBounds(t *testing.T) {
	simdtest.Paths(t, &useAVX2, func(t *testing.T) {
		q := Split(make([]int8, 100), 64)
		out := make([]int32, 10)
		for _, tc := range []struct {
			name   string
			q      []int8
			rows   []byte
			stride int
			want   int
		}{
			{"no query", nil, make([]byte, 640), 64, 0},
			{"odd query length", q[:127], make([]byte, 640), 64, 0},
			{"query not whole chunks", make([]int8, 40), make([]byte, 640), 64, 0},
			{"stride below the codes", q, make([]byte, 640), 32, 0},
			{"rows shorter than one row", q, make([]byte, 63), 64, 0},
			{"rows for 3 rows and a part", q, make([]byte, 3*80+64), 80, 4},
			{"more rows than out", q, make([]byte, 64*20), 64, 10},
		} {
			if got := Dots(tc.q, tc.rows, tc.stride, out); got != tc.want {
				t.Errorf("%s: %d rows, want %d", tc.name, got, tc.want)
			}
		}
	})
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		q     []int8
		bytes int
		want  []int8
	}{
		{"too small", make([]int8, 100), 32, nil},
		{"not whole chunks", make([]int8, 10), 40, nil},
		{"zero", nil, 0, nil},
	} {
		if got := Split(tc.q, tc.bytes); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	got := Split([]int8{1, 2, 3}, 32)
	if len(got) != 64 || got[0] != 1 || got[1] != 3 || got[32] != 2 || got[33] != 0 {
		t.Errorf("Split([1 2 3], 32) = %v", got)
	}
}

func BenchmarkDots(b *testing.B) {
	const n, stride = 8192, 64
	q := make([]int8, 100)
	for i := range q {
		q[i] = int8(i - 50)
	}
	sq := Split(q, 64)
	rows := make([]byte, n*stride)
	out := make([]int32, 256)
	b.SetBytes(n * stride)
	for b.Loop() {
		for r := 0; r < n; r += 256 {
			Dots(sq, rows[r*stride:], stride, out)
		}
	}
}

// TestDotsScaledMatchesReference checks DotsScaled bit for bit against
// lo*qsum + step*dot computed in Go from the reference dot product, on
// both kernels, with row counts that do and do not fill groups of four.
func TestDotsScaledMatchesReference(t *testing.T) {
	simdtest.Paths(t, &useAVX2, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, tc := range []struct{ dims, n int }{{1, 1}, {16, 3}, {100, 4}, {100, 37}, {130, 9}, {600, 6}} {
			bytes := ((tc.dims+1)/2 + Chunk - 1) / Chunk * Chunk
			fieldOff := ((tc.dims+1)/2 + 3) &^ 3
			stride := (max(bytes, fieldOff+12) + 15) &^ 15
			q := make([]int8, tc.dims)
			var qsum int32
			for j := range q {
				q[j] = int8(rng.IntN(255) - 127)
				qsum += int32(q[j])
			}
			rows := make([]byte, tc.n*stride)
			for i := range rows {
				rows[i] = byte(rng.IntN(256))
			}
			for i := range tc.n {
				binary.LittleEndian.PutUint32(rows[i*stride+fieldOff:], math.Float32bits(float32(rng.NormFloat64())))
				binary.LittleEndian.PutUint32(rows[i*stride+fieldOff+4:], math.Float32bits(float32(rng.Float64()/15)))
			}
			sq := Split(q, bytes)
			out := make([]float32, tc.n)
			if got := DotsScaled(sq, rows, stride, fieldOff, float32(qsum), out); got != tc.n {
				t.Fatalf("dims %d: %d rows, want %d", tc.dims, got, tc.n)
			}
			// The kernel reads the fields too (they sit in its last
			// chunk at some dims): zero them for the reference dot.
			plain := slices.Clone(rows)
			for i := range tc.n {
				clear(plain[i*stride+(tc.dims+1)/2 : (i+1)*stride])
			}
			d := ref(q, plain, stride, tc.n)
			for i := range tc.n {
				lo := math.Float32frombits(binary.LittleEndian.Uint32(rows[i*stride+fieldOff:]))
				step := math.Float32frombits(binary.LittleEndian.Uint32(rows[i*stride+fieldOff+4:]))
				want := float32(lo*float32(qsum)) + float32(step*float32(d[i]))
				if math.Float32bits(out[i]) != math.Float32bits(want) {
					t.Fatalf("dims %d row %d: %v, want %v", tc.dims, i, out[i], want)
				}
			}
		}
	})
}

func TestDotsScaledBounds(t *testing.T) {
	simdtest.Paths(t, &useAVX2, func(t *testing.T) {
		q := Split(make([]int8, 100), 64)
		out := make([]float32, 10)
		for _, tc := range []struct {
			name             string
			rows             []byte
			stride, fieldOff int
			want             int
		}{
			{"fields past the stride", make([]byte, 640), 64, 60, 0},
			{"negative field offset", make([]byte, 640), 64, -4, 0},
			{"rows for 2 rows and a part", make([]byte, 2*64+63), 64, 52, 2},
			{"more rows than out", make([]byte, 64*20), 64, 52, 10},
		} {
			if got := DotsScaled(q, tc.rows, tc.stride, tc.fieldOff, 1, out); got != tc.want {
				t.Errorf("%s: %d rows, want %d", tc.name, got, tc.want)
			}
		}
	})
}
