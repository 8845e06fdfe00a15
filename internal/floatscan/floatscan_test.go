package floatscan

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/internal/simdtest"
)

// ref is ClearBelow one sum at a time.
func ref(win []float64, bar float64) int {
	for i, v := range win {
		if v >= bar {
			return i
		}
		win[i] = 0
	}
	return len(win)
}

// TestClearBelowIsScalar: windows of every length up to 100 and longer
// ones, sums mostly below the bar with a few at, just above and just
// below it, zeros, negative zeros, negative sums, infinities and NaNs, and
// bars positive, zero, negative and tiny: the index and the window after
// equal those of a scan one sum at a time, and so do the scans that go on
// from each hit (as the text search does, raising the bar).
func TestClearBelowIsScalar(t *testing.T) {
	simdtest.Paths(t, &useAVX2, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		bars := []float64{7.25, 1, math.SmallestNonzeroFloat64, 0, math.Copysign(0, -1), -2.5, math.Inf(1)}
		lengths := []int{}
		for n := range 101 {
			lengths = append(lengths, n)
		}
		lengths = append(lengths, 255, 256, 257, 2048)
		cases := 0
		for _, n := range lengths {
			for _, bar := range bars {
				for _, hits := range []int{0, 1, 3, n / 7} {
					if hits > 50 {
						hits = 50 // a long window: each hit is a scan of the rest
					}
					win := make([]float64, n)
					for i := range win {
						switch r := rng.IntN(20); {
						case r < 8:
							win[i] = rng.Float64() * math.Abs(bar) * 0.999
						case r < 12:
							win[i] = 0
						case r == 12:
							win[i] = math.Copysign(0, -1)
						case r == 13:
							win[i] = -rng.Float64() * 10
						case r == 14:
							win[i] = math.Nextafter(bar, math.Inf(-1))
						default:
							win[i] = rng.Float64() * 3
						}
					}
					for range hits {
						if n == 0 {
							break
						}
						switch i := rng.IntN(n); rng.IntN(4) {
						case 0:
							win[i] = bar
						case 1:
							win[i] = math.Nextafter(bar, math.Inf(1))
						case 2:
							win[i] = math.Inf(1)
						default:
							win[i] = math.NaN()
						}
					}
					got, want := slices.Clone(win), slices.Clone(win)
					for from := 0; ; {
						i, j := from+ClearBelow(got[from:], bar), from+ref(want[from:], bar)
						cases++
						if i != j {
							t.Fatalf("n=%d bar=%v from %d: first at or above at %d, want %d", n, bar, from, i, j)
						}
						if !sameBits(got, want) {
							t.Fatalf("n=%d bar=%v from %d: the window differs after the scan", n, bar, from)
						}
						if i == n {
							break
						}
						got[i], want[i] = 0, 0
						from = i + 1
					}
				}
			}
		}
		t.Logf("%d scans", cases)
	})
}

func sameBits(a, b []float64) bool {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// BenchmarkClearBelow: a window of 16,384 sums, a third of them
// non-zero and below the bar, none at or above it.
func BenchmarkClearBelow(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float64, 1<<14)
	for i := range src {
		if rng.IntN(3) == 0 {
			src[i] = rng.Float64() * 7
		}
	}
	win := make([]float64, len(src))
	for _, avx := range []bool{true, false} {
		if avx && !useAVX2 {
			continue
		}
		name := "generic"
		if avx {
			name = "avx2"
		}
		b.Run(name, func(b *testing.B) {
			saved := useAVX2
			defer func() { useAVX2 = saved }()
			useAVX2 = avx
			for b.Loop() {
				copy(win, src)
				if ClearBelow(win, 7.5) != len(win) {
					b.Fatal("a sum at or above the bar")
				}
			}
		})
	}
}

// TestFirstNotBelow32IsScalar: windows of every length up to 100 and
// longer ones, scores mostly below the bar with a few at it, just above
// and just below it, zeros, negative zeros, infinities and NaNs, and bars
// positive, zero, negative, infinite and NaN: the index equals the first
// score not below the bar found one at a time, and so do the scans that
// go on from each one found with a raised bar (as the vector scan does).
func TestFirstNotBelow32IsScalar(t *testing.T) {
	simdtest.Paths(t, &useAVX2, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(13, 14))
		nan := float32(math.NaN())
		bars := []float32{0.75, 1, math.SmallestNonzeroFloat32, 0, float32(math.Copysign(0, -1)), -2.5, float32(math.Inf(1)), float32(math.Inf(-1)), nan}
		lengths := []int{}
		for n := range 101 {
			lengths = append(lengths, n)
		}
		lengths = append(lengths, 255, 256, 257, 4096)
		first := func(win []float32, bar float32) int {
			for i, v := range win {
				if !(v < bar) {
					return i
				}
			}
			return len(win)
		}
		for _, n := range lengths {
			for _, bar := range bars {
				for _, hits := range []int{0, 1, 3, n / 7} {
					win := make([]float32, n)
					for i := range win {
						switch r := rng.IntN(20); {
						case r < 10:
							win[i] = bar - 1 - rng.Float32()*4
						case r == 10:
							win[i] = float32(math.Copysign(0, -1))
						case r == 11:
							win[i] = float32(math.Inf(-1))
						default:
							win[i] = math.Nextafter32(bar, float32(math.Inf(-1)))
						}
						if !(win[i] < bar) && bar == bar {
							win[i] = float32(math.Inf(-1)) // below the bar but for a NaN bar
						}
					}
					for range hits {
						if n == 0 {
							break
						}
						switch i := rng.IntN(n); rng.IntN(4) {
						case 0:
							win[i] = bar
						case 1:
							win[i] = nan
						case 2:
							win[i] = math.Nextafter32(bar, float32(math.Inf(1)))
						default:
							win[i] = float32(math.Inf(1))
						}
					}
					at, b := 0, bar
					for {
						got, want := FirstNotBelow32(win[at:], b), first(win[at:], b)
						if got != want {
							t.Fatalf("n %d bar %v from %d: got %d, want %d", n, b, at, got, want)
						}
						if at += got + 1; at >= n {
							break
						}
						if v := win[at-1]; v == v && v > b {
							b = v // the floor rises to the score found
						}
					}
				}
			}
		}
	})
}
