package engine

import (
	"container/heap"
	"sort"
)

// fusedHit is a candidate after fusion, with the raw scores it came with.
type fusedHit struct {
	id        uint64
	score     float64
	text, vec float64
	cov       float64 // lexical coverage of the query (TextHit.Coverage)
}

// fuse combines the lexical and vector candidate lists into one ranking.
func (e *Engine) fuse(text, vec []scored) []fusedHit {
	byID := make(map[uint64]*fusedHit, len(text)+len(vec))
	get := func(id uint64) *fusedHit {
		h := byID[id]
		if h == nil {
			h = &fusedHit{id: id}
			byID[id] = h
		}
		return h
	}
	for _, s := range text {
		h := get(s.id)
		h.text, h.cov = s.score, s.cov
	}
	for _, s := range vec {
		get(s.id).vec = s.score
	}
	switch e.opts.Fusion {
	case FusionRRF:
		addRRF(byID, text, e.opts.RRFK)
		addRRF(byID, vec, e.opts.RRFK)
	case FusionScale:
		w := e.opts.TextWeight
		addScaled(byID, text, w, true)
		addScaled(byID, vec, 1-w, false)
	default:
		w := e.opts.TextWeight
		if e.opts.NoVector {
			w = 1
		} else if e.opts.NoText {
			w = 0
		}
		addMinMax(byID, text, w)
		addMinMax(byID, vec, 1-w)
	}
	out := make([]fusedHit, 0, len(byID))
	for _, h := range byID {
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id > out[j].id
	})
	return out
}

func addRRF(byID map[uint64]*fusedHit, list []scored, k int) {
	for rank, s := range list {
		byID[s.id].score += 1 / float64(k+rank+1)
	}
}

// addMinMax adds w times the min-max normalised score of each candidate.
func addMinMax(byID map[uint64]*fusedHit, list []scored, w float64) {
	if len(list) == 0 || w == 0 {
		return
	}
	lo, hi := list[0].score, list[0].score
	for _, s := range list {
		lo, hi = min(lo, s.score), max(hi, s.score)
	}
	for _, s := range list {
		n := 1.0
		if hi > lo {
			n = (s.score - lo) / (hi - lo)
		}
		byID[s.id].score += w * n
	}
}

// addScaled adds w times each score, divided by the list's maximum when
// byMax (BM25 has no fixed scale; cosine has).
func addScaled(byID map[uint64]*fusedHit, list []scored, w float64, byMax bool) {
	if len(list) == 0 || w == 0 {
		return
	}
	hi := 1.0
	if byMax {
		hi = list[0].score
		for _, s := range list {
			hi = max(hi, s.score)
		}
	}
	for _, s := range list {
		byID[s.id].score += w * max(s.score, 0) / hi
	}
}

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
