package keysort_test

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/hmo-dev/hmo/internal/keysort"
)

func TestSortAsSlicesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		n      int
		values uint64 // distinct Hi values (0: any)
	}{
		{"empty", 0, 0}, {"one", 1, 0}, {"short", 12, 0}, {"thirteen", 13, 3},
		{"hundred", 100, 0}, {"ties", 200, 4}, {"all equal", 300, 1}, {"large", 5000, 0}, {"large ties", 5000, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 {
				k := make([]keysort.Key, tc.n)
				for i := range k {
					hi := r.Uint64()
					if tc.values > 0 {
						hi %= tc.values
					}
					k[i] = keysort.Key{Hi: hi, Lo: r.Uint64() % 5, At: int32(i)}
				}
				want := slices.Clone(k)
				slices.SortStableFunc(want, func(a, b keysort.Key) int {
					if c := cmp.Compare(a.Hi, b.Hi); c != 0 {
						return c
					}
					return cmp.Compare(a.Lo, b.Lo)
				})
				got := slices.Clone(k)
				keysort.Sort(got)
				for i := range got {
					if got[i].Hi != want[i].Hi || got[i].Lo != want[i].Lo {
						t.Fatalf("place %d: %+v, want %+v", i, got[i], want[i])
					}
				}
				seen := make([]bool, len(got))
				for _, g := range got {
					if seen[g.At] {
						t.Fatalf("place %d twice", g.At)
					}
					seen[g.At] = true
				}
			}
		})
	}
}

func TestSortedRuns(t *testing.T) {
	// Ascending, descending and sawtooth inputs, the quicksort's hard cases.
	for _, n := range []int{50, 1000, 10000} {
		for name, f := range map[string]func(i int) uint64{
			"up":   func(i int) uint64 { return uint64(i) },
			"down": func(i int) uint64 { return uint64(n - i) },
			"saw":  func(i int) uint64 { return uint64(i % 17) },
		} {
			k := make([]keysort.Key, n)
			for i := range k {
				k[i] = keysort.Key{Hi: f(i), Lo: uint64(i), At: int32(i)}
			}
			keysort.Sort(k)
			if !slices.IsSortedFunc(k, func(a, b keysort.Key) int {
				if c := cmp.Compare(a.Hi, b.Hi); c != 0 {
					return c
				}
				return cmp.Compare(a.Lo, b.Lo)
			}) {
				t.Fatalf("%s %d: not sorted", name, n)
			}
		}
	}
}

func TestDescending(t *testing.T) {
	fs := []float64{math.Inf(1), 1e300, 3.5, 1, 1e-300, 0, -1e-300, -1, -3.5, -1e300, math.Inf(-1)}
	for i := 1; i < len(fs); i++ {
		a, _ := keysort.Descending(fs[i-1])
		b, _ := keysort.Descending(fs[i])
		if a >= b {
			t.Errorf("%v (key %x) does not sort before %v (key %x)", fs[i-1], a, fs[i], b)
		}
	}
	z, _ := keysort.Descending(0)
	if nz, _ := keysort.Descending(math.Copysign(0, -1)); nz != z {
		t.Errorf("-0 has key %x, +0 %x", nz, z)
	}
	if _, ok := keysort.Descending(math.NaN()); ok {
		t.Error("NaN has a key")
	}
}

// TestSortDescending: scores highest first and equal scores by the
// tie-break, as a comparison sort orders them, on scores with many ties;
// a NaN score or a repeated score and tie-break leave s as it was and
// report false.
func TestSortDescending(t *testing.T) {
	type item struct {
		score float64
		tie   uint64
	}
	key := func(s []item) func(int) (float64, uint64) {
		return func(i int) (float64, uint64) { return s[i].score, s[i].tie }
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 2, 13, 200, 1000} {
		s := make([]item, n)
		for i, p := range r.Perm(n) {
			s[i] = item{float64(r.IntN(5)) - 2, uint64(p)}
		}
		want := slices.Clone(s)
		slices.SortFunc(want, func(a, b item) int {
			return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.tie, b.tie))
		})
		if !keysort.SortDescending(s, key(s)) || !slices.Equal(s, want) {
			t.Fatalf("n %d: %v, want %v", n, s, want)
		}
	}
	for name, s := range map[string][]item{
		"NaN":      {{1, 1}, {math.NaN(), 2}, {3, 3}},
		"repeated": {{1, 1}, {3, 3}, {1, 1}},
	} {
		was := slices.Clone(s)
		if keysort.SortDescending(s, key(s)) || !slices.EqualFunc(s, was, func(a, b item) bool {
			return a.tie == b.tie && (a.score == b.score || a.score != a.score && b.score != b.score)
		}) {
			t.Errorf("%s: sorted to %v; want false and %v", name, s, was)
		}
	}
}

func TestApply(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 7, 100} {
		s := make([]int, n)
		k := make([]keysort.Key, n)
		for i := range s {
			s[i] = i * 10
			k[i] = keysort.Key{At: int32(i)}
		}
		r.Shuffle(n, func(i, j int) { k[i], k[j] = k[j], k[i] })
		want := make([]int, n)
		for i := range k {
			want[i] = s[k[i].At]
		}
		keysort.Apply(s, k)
		if !slices.Equal(s, want) {
			t.Fatalf("n %d: %v, want %v", n, s, want)
		}
	}
}

func TestHeapSort(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 3, 13, 100, 1000} {
		k := make([]keysort.Key, n)
		for i := range k {
			k[i] = keysort.Key{Hi: r.Uint64() % 10, Lo: r.Uint64() % 3, At: int32(i)}
		}
		keysort.HeapSort(k)
		if !slices.IsSortedFunc(k, func(a, b keysort.Key) int {
			if c := cmp.Compare(a.Hi, b.Hi); c != 0 {
				return c
			}
			return cmp.Compare(a.Lo, b.Lo)
		}) {
			t.Fatalf("n %d: not sorted", n)
		}
	}
}

// TestSortDescendingAtOnce: SortDescending reuses its keys from one sort
// to the next; sorts of slices of several sizes, at once on several
// goroutines and one after another, each give the order of a stable
// sort by score, and a sort that reports false leaves its slice as it
// was.
func TestSortDescendingAtOnce(t *testing.T) {
	type item struct {
		score float64
		at    uint64
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 77))
			for round := range 200 {
				n := 1 + rng.IntN(600)
				s := make([]item, n)
				for i := range s {
					s[i] = item{float64(rng.IntN(50)), uint64(i)}
				}
				if round%10 == 9 {
					s[rng.IntN(n)].score = math.NaN()
				}
				want := slices.Clone(s)
				ok := keysort.SortDescending(s, func(i int) (float64, uint64) { return s[i].score, s[i].at })
				if hasNaN := slices.ContainsFunc(want, func(x item) bool { return x.score != x.score }); hasNaN {
					if ok || !slices.EqualFunc(s, want, func(a, b item) bool { return a.at == b.at }) {
						t.Errorf("a NaN: reported %t, or the slice changed", ok)
					}
					continue
				}
				slices.SortStableFunc(want, func(a, b item) int { return cmp.Compare(b.score, a.score) })
				if !ok || !slices.Equal(s, want) {
					t.Errorf("n %d: reported %t, order differs from the stable sort", n, ok)
					return
				}
			}
		})
	}
	wg.Wait()
}
