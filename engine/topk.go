package engine

import "slices"

// topK keeps the k best candidates seen. Its heap is container/heap's
// algorithm on a typed slice (no interface boxing per push), so it keeps
// and orders equal scores exactly as container/heap did.
type topK struct {
	k int
	h minHeap
}

func newTopK(k int) *topK { return &topK{k: k} }

func (t *topK) push(s scored) {
	if len(t.h) < t.k {
		t.h = append(t.h, s)
		t.h.up(len(t.h) - 1)
		return
	}
	if s.score > t.h[0].score {
		t.h[0] = s
		t.h.down(0, len(t.h)) // container/heap.Fix(h, 0): up(0) is a no-op
	}
}

// sorted returns the candidates kept, best first. slices.SortFunc is the
// same pattern-defeating quicksort as sort.Slice (both generated from one
// template), so equal scores come out in the order sort.Slice gave them.
func (t *topK) sorted() []scored {
	out := append([]scored(nil), t.h...)
	slices.SortFunc(out, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case b.score > a.score:
			return 1
		}
		return 0
	})
	return out
}

// minHeap is a min-heap of scores.
type minHeap []scored

// up is container/heap's up.
func (h minHeap) up(j int) {
	for {
		i := (j - 1) / 2 // parent
		if i == j || !(h[j].score < h[i].score) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

// down is container/heap's down.
func (h minHeap) down(i0, n int) bool {
	i := i0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 { // j1 < 0 after int overflow
			break
		}
		j := j1 // left child
		if j2 := j1 + 1; j2 < n && h[j2].score < h[j1].score {
			j = j2 // = 2*i + 2  // right child
		}
		if !(h[j].score < h[i].score) {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
	return i > i0
}
