package hnsw

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"

	"github.com/hmo-dev/hmo/engine"
)

// Search returns up to k live ids nearest q by cosine similarity, best
// first; ties go to the lower id. q is normalised to unit length. With at
// most Options.ExactBelow live vectors the scan is exact; otherwise the
// graph is searched for more than k nodes, so that k remain once
// tombstones are dropped, and the hits are rescored exactly. If the graph
// cannot supply k live hits (heavy tombstoning, a recovered panic in
// coder/hnsw), Search falls back to the exact scan.
func (x *Index) Search(q []float32, k int) ([]engine.VectorHit, error) {
	if k <= 0 {
		return nil, fmt.Errorf("%w: got %d", ErrInvalidK, k)
	}
	norm, err := checkVector(q, x.opts.Dims)
	if err != nil {
		return nil, fmt.Errorf("hnsw: search: %w", err)
	}
	uq := make([]float32, len(q))
	normalize(uq, q, norm)

	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, ErrClosed
	}
	live := len(x.slots)
	k = min(k, live)
	if k == 0 {
		return nil, nil
	}
	if x.g != nil && live > x.opts.ExactBelow {
		if hits := x.searchGraph(uq, k); hits != nil {
			return hits, nil
		}
	}
	return x.searchExact(uq, k), nil
}

// fetchCount is how many graph nodes to ask for so that, with tombstones
// spread evenly, k of them are live: k scaled by total/live slots, plus a
// quarter of k for tombstones that cluster near the query.
func fetchCount(k, live, total int) int {
	return (k*total+live-1)/live + (k+3)/4
}

// searchGraph returns the k best live hits found in the graph, or nil if
// the graph did not yield k of them. The caller holds x.mu for reading.
func (x *Index) searchGraph(q []float32, k int) []engine.VectorHit {
	total := len(x.ids)
	// Beyond half the nodes, a graph search costs about as much as a scan.
	for n := fetchCount(k, len(x.slots), total); 2*n <= total; n *= 2 {
		keys, err := graphSearch(x.g, q, n)
		if err != nil {
			return nil
		}
		hits := make([]engine.VectorHit, 0, len(keys))
		for _, s := range keys {
			if s < uint64(total) && !x.dead[s] {
				hits = append(hits, engine.VectorHit{ID: x.ids[s], Score: dot(q, x.vecs[s])})
			}
		}
		if len(hits) >= k {
			slices.SortFunc(hits, compareHits)
			return hits[:k]
		}
		if len(keys) < n {
			return nil // the graph reached no more nodes
		}
	}
	return nil
}

// searchExact scores every live vector and returns the k best. The caller
// holds x.mu for reading.
func (x *Index) searchExact(q []float32, k int) []engine.VectorHit {
	h := make(hitHeap, 0, k)
	for s, v := range x.vecs {
		if x.dead[s] {
			continue
		}
		hit := engine.VectorHit{ID: x.ids[s], Score: dot(q, v)}
		if len(h) < k {
			heap.Push(&h, hit)
		} else if compareHits(hit, h[0]) < 0 {
			h[0] = hit
			heap.Fix(&h, 0)
		}
	}
	slices.SortFunc(h, compareHits)
	return h
}

// compareHits orders hits best first: higher score, then lower id.
func compareHits(a, b engine.VectorHit) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// hitHeap is a heap whose root is the worst hit kept.
type hitHeap []engine.VectorHit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return compareHits(h[i], h[j]) > 0 }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(v any)        { *h = append(*h, v.(engine.VectorHit)) }
func (h *hitHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}
