package xmemory

import (
	"math"
	"sort"
)

// Item is a candidate unit (a theme, a fact) for Select.
type Item struct {
	// Relevance is the normalised query–unit score s̃(q, i) in [0, 1].
	Relevance float64
	// Vec is the unit's embedding; the kNN graph among items is built
	// from it.
	Vec []float32
}

// SelectOptions tune Select. Zero values mean the defaults.
type SelectOptions struct {
	// Alpha balances coverage (Alpha) and relevance (1-Alpha) in Eq. 4,
	// in [0, 1]. Default DefaultAlpha.
	Alpha float64
	// Neighbours is k of the kNN graph among candidates. Default
	// DefaultGraphK.
	Neighbours int
	// MinEdge is the least cosine for a kNN edge. Default DefaultMinEdge.
	MinEdge float64
	// Coverage stops the selection once |C(R)|/|V| reaches it, in
	// (0, 1]. Default DefaultCoverage.
	Coverage float64
	// Max bounds |R|; 0 means no bound but Coverage.
	Max int
}

// Defaults of SelectOptions.
const (
	DefaultAlpha    = 0.5
	DefaultGraphK   = 5
	DefaultMinEdge  = 0.5
	DefaultCoverage = 1.0
)

func (o SelectOptions) withDefaults() SelectOptions {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	o.Alpha = math.Min(math.Max(o.Alpha, 0), 1)
	if o.Neighbours == 0 {
		o.Neighbours = DefaultGraphK
	}
	if o.MinEdge == 0 {
		o.MinEdge = DefaultMinEdge
	}
	if o.Coverage <= 0 || o.Coverage > 1 {
		o.Coverage = DefaultCoverage
	}
	return o
}

// Select picks representatives among items by the paper's greedy
// coverage-plus-relevance rule (Eq. 4): each step takes the item i that
// maximises α·Σ_{u∈Δ(i;R)} w_iu / Z + (1−α)·s̃(q,i), where Δ(i;R) are the
// items i and its kNN neighbours newly covered, w_iu the edge's cosine
// (1 for i itself) and Z the largest such sum over items. It stops when
// the covered share reaches Coverage or Max items are chosen, and returns
// the chosen indices in the order chosen (ties: lower index).
func Select(items []Item, o SelectOptions) []int {
	o = o.withDefaults()
	n := len(items)
	if n == 0 {
		return nil
	}
	type edge struct {
		to int
		w  float64
	}
	nb := make([][]edge, n)
	for i := range items {
		var es []edge
		for j := range items {
			if i == j {
				continue
			}
			if w := cos(items[i].Vec, items[j].Vec); w >= o.MinEdge {
				es = append(es, edge{j, w})
			}
		}
		sort.SliceStable(es, func(a, b int) bool { return es[a].w > es[b].w })
		if len(es) > o.Neighbours {
			es = es[:o.Neighbours]
		}
		nb[i] = append([]edge{{i, 1}}, es...)
	}
	var z float64
	for i := range nb {
		var s float64
		for _, e := range nb[i] {
			s += e.w
		}
		z = math.Max(z, s)
	}
	covered := make([]bool, n)
	chosen := make([]bool, n)
	var out []int
	ncov := 0
	for {
		if float64(ncov) >= o.Coverage*float64(n) || (o.Max > 0 && len(out) >= o.Max) || len(out) == n {
			return out
		}
		best, bestScore := -1, math.Inf(-1)
		for i := range items {
			if chosen[i] {
				continue
			}
			var gain float64
			for _, e := range nb[i] {
				if !covered[e.to] {
					gain += e.w
				}
			}
			s := o.Alpha*gain/z + (1-o.Alpha)*items[i].Relevance
			if s > bestScore {
				best, bestScore = i, s
			}
		}
		chosen[best] = true
		out = append(out, best)
		for _, e := range nb[best] {
			if !covered[e.to] {
				covered[e.to] = true
				ncov++
			}
		}
	}
}
