package retrieve

// Segment is a node of a segment tree (SegTreeMem) as propagation sees it.
type Segment struct {
	ID       uint64
	Parent   uint64 // 0 under the root
	Level    int    // 1 holds records
	Children []uint64
}

// Forest is the part of a segment tree around some records: each record's
// level-1 segment and the segments above it.
type Forest struct {
	Parent map[uint64]uint64   // record id -> its level-1 segment
	Nodes  map[uint64]*Segment // segment id -> segment
}

// TreeSource is implemented by a Source that keeps a segment tree.
type TreeSource interface {
	// Segments returns the forest around leaves, levels segments up.
	Segments(leaves []uint64, levels int) (*Forest, error)
}

// PropagationOptions configure the segtree stage: relevance propagated
// top-down over the segment tree, SegTreeMem's
//
//	s̃ = Σ_{k=0..H} α^k W^k s⁽⁰⁾ / Σ_{k=0..H} α^k
//
// with W the column-normalised parent-to-child matrix. A segment's local
// score s⁽⁰⁾ is the best score among its candidate records (the tree
// holds no summaries' embeddings of its own to score), so a segment that
// matches well lends a share of its relevance to every record it holds,
// candidates or not: its other records join the candidates.
type PropagationOptions struct {
	// Alpha is the decay α in [0, 1). Default DefaultAlpha.
	Alpha float64
	// Hops is the horizon H. Default DefaultHops.
	Hops int
}

// Propagation defaults: the values of the SegTreeMem paper (α = 0.1,
// H = 2), not tuned here.
const (
	DefaultAlpha = 0.1
	DefaultHops  = 2
)

// propagate runs the segtree stage over cands and returns them with the
// records the tree adds.
func propagate(o *PropagationOptions, cands []Candidate, f *Forest) []Candidate {
	if f == nil || len(f.Parent) == 0 {
		return cands
	}
	// Local scores: records by their score, segments by their best record
	// (level 1) or best child segment (above).
	s0 := map[uint64]float64{}
	for i := range cands {
		c := &cands[i]
		v := max(c.Score, 0)
		for id, l := f.Parent[c.ID], 1; id != 0 && l <= o.Hops; l++ {
			s0[id] = max(s0[id], v)
			n := f.Nodes[id]
			if n == nil {
				break
			}
			id = n.Parent
		}
	}
	// Mass reaching each level-1 segment's children after k hops down:
	// down[k][seg] is the share of α^k s⁽ᵏ⁾ that each child of seg gets.
	alpha, norm := o.Alpha, 1.0
	for k := 1; k <= o.Hops; k++ {
		norm += pow(alpha, k)
	}
	perChild := func(seg uint64) float64 {
		n := f.Nodes[seg]
		if n == nil || len(n.Children) == 0 {
			return 0
		}
		// k = 1: from the segment itself; k = 2: from its parent, through it; ...
		var m float64
		share := 1.0 / float64(len(n.Children))
		id, w := seg, share
		for k := 1; k <= o.Hops && id != 0; k++ {
			m += pow(alpha, k) * s0[id] * w
			p := f.Nodes[id]
			if p == nil || p.Parent == 0 {
				break
			}
			pn := f.Nodes[p.Parent]
			if pn == nil || len(pn.Children) == 0 {
				break
			}
			w /= float64(len(pn.Children))
			id = p.Parent
		}
		return m
	}
	idx := make(map[uint64]int, len(cands))
	for i := range cands {
		idx[cands[i].ID] = i
	}
	gain := map[uint64]float64{}
	for _, n := range f.Nodes {
		if n.Level == 1 {
			gain[n.ID] = perChild(n.ID)
		}
	}
	for i := range cands {
		c := &cands[i]
		c.Score = (max(c.Score, 0) + gain[f.Parent[c.ID]]) / norm
	}
	// The other records of the segments gain too: structure candidates.
	for _, n := range f.Nodes {
		if n.Level != 1 || gain[n.ID] == 0 {
			continue
		}
		for _, leaf := range n.Children {
			if _, ok := idx[leaf]; !ok {
				idx[leaf] = len(cands)
				cands = append(cands, Candidate{ID: leaf, Score: gain[n.ID] / norm})
			}
		}
	}
	return cands
}

func pow(a float64, k int) float64 {
	r := 1.0
	for range k {
		r *= a
	}
	return r
}
