package engine

import (
	"container/heap"
	"sort"
)

// topK keeps the k best candidates seen.
type topK struct {
	k int
	h minHeap
}

func newTopK(k int) *topK { return &topK{k: k} }

func (t *topK) push(s scored) {
	if len(t.h) < t.k {
		heap.Push(&t.h, s)
		return
	}
	if s.score > t.h[0].score {
		t.h[0] = s
		heap.Fix(&t.h, 0)
	}
}

func (t *topK) sorted() []scored {
	out := append([]scored(nil), t.h...)
	sort.Slice(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out
}

type minHeap []scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
