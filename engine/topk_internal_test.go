package engine

import (
	"container/heap"
	"fmt"
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
