package engine

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// boxedHeap is the container/heap min-heap topK used before.
type boxedHeap []scored

func (h boxedHeap) Len() int           { return len(h) }
func (h boxedHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h boxedHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *boxedHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *boxedHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// boxedTop is the topK of container/heap and sort.Slice.
func boxedTop(list []scored, k int) []scored {
	var h boxedHeap
	for _, s := range list {
		if len(h) < k {
			heap.Push(&h, s)
		} else if s.score > h[0].score {
			h[0] = s
			heap.Fix(&h, 0)
		}
	}
	out := append([]scored(nil), h...)
	sort.Slice(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out
}

// TestTopKAsContainerHeap checks that topK keeps and orders candidates,
// equal scores included, exactly as the container/heap and sort.Slice
// version did: the tier walk's and exact scans' candidate order, hence
// rankings, must not change.
func TestTopKAsContainerHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 3000 {
		n, k := rng.IntN(300), 1+rng.IntN(60)
		levels := 1 + rng.IntN(8) // few distinct scores: many ties
		list := make([]scored, n)
		for i := range list {
			list[i] = scored{id: uint64(i + 1), score: float64(rng.IntN(levels)) / 4}
		}
		top := newTopK(k)
		for _, s := range list {
			top.push(s)
		}
		got, want := top.sorted(), boxedTop(list, k)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d (n %d, k %d): topK %v, container/heap %v", trial, n, k, got, want)
		}
	}
}

// TestMergeTopAsTopOf checks that mergeTop returns what topOf returns for
// the concatenation of its lists, equal scores, NaN, signed zeros and
// unsorted lists included: the tier walk's vector candidates, hence its
// rankings, must not change.
func TestMergeTopAsTopOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	list := func(n, levels int, sorted bool, odd float64) []scored {
		l := make([]scored, n)
		for i := range l {
			l[i] = scored{id: uint64(rng.IntN(1 << 20)), score: float64(rng.IntN(levels)) / 7}
			if odd != 0 && rng.IntN(10) == 0 {
				l[i].score = odd
			}
		}
		if sorted {
			sort.SliceStable(l, func(i, j int) bool { return l[i].score > l[j].score })
		}
		return l
	}
	negZero := math.Copysign(0, -1)
	cases := []struct {
		name   string
		levels int // distinct scores: few make ties
		sorted bool
		odd    float64 // a score some entries take instead; 0 for none
	}{
		{"distinct", 1 << 30, true, 0},
		{"ties", 5, true, 0},
		{"unsorted", 1 << 30, false, 0},
		{"NaN", 1 << 30, true, math.NaN()},
		{"signed zeros", 1 << 30, true, negZero},
		{"infinities", 1 << 30, true, math.Inf(-1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for trial := range 2000 {
				a := list(rng.IntN(120), tc.levels, tc.sorted, tc.odd)
				b := list(rng.IntN(120), tc.levels, tc.sorted || rng.IntN(2) == 0, 0)
				if tc.odd == negZero {
					a = append(a, scored{id: 7, score: 0}) // +0 against -0
				}
				c := 1 + rng.IntN(140) // topOf keeps at least one
				want := topOf(append(append([]scored(nil), a...), b...), c)
				got := mergeTop(append([]scored(nil), a...), b, c)
				if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
					t.Fatalf("trial %d (a %d, b %d, c %d): mergeTop %v, topOf %v", trial, len(a), len(b), c, got, want)
				}
			}
		})
	}
}
