package retrieve

import "time"

// HTreeInfo is what a temporal-semantic tree knows of one record.
type HTreeInfo struct {
	// Nodes are the record's ancestors, the first level up first; 0
	// where it has none.
	Nodes []uint64
	// N is how many records the record's parent node holds (H-Mem's
	// n_m) and Last the latest of their times (r_m).
	N    int
	Last time.Time
}

// HTreeSource is implemented by a Source with a temporal-semantic tree
// (H-Mem). The tree stage runs only over sources that implement it, and
// the robustness stage reads n_m and r_m from it when it can.
type HTreeSource interface {
	// HTreeInfo returns what the tree knows of ids, in order.
	HTreeInfo(ids []uint64) ([]HTreeInfo, error)
}

// HTreeOptions configure the tree stage.
type HTreeOptions struct {
	// Share is the share of the best score among a candidate's siblings
	// under its first-level node that the candidate gets; each level up
	// gets Decay times the level below's share. Default DefaultHTreeShare.
	Share float64
	// Decay is the factor from one level to the next. Default
	// DefaultHTreeDecay.
	Decay float64
}

// Defaults of the tree stage: SegTreeMem's propagation factor order
// (DESIGN.md section 9: α ≈ 0.1 per hop, here a larger first hop because
// siblings share a window and a topic).
const (
	DefaultHTreeShare = 0.2
	DefaultHTreeDecay = 0.5
)

// htreePropagate adds to each candidate a share of the best score among
// the other candidates under the same node, level by level, from the
// scores as they stood before the stage.
func htreePropagate(o *HTreeOptions, cands []Candidate, ts HTreeSource) error {
	ids := make([]uint64, len(cands))
	for i := range cands {
		ids[i] = cands[i].ID
	}
	info, err := ts.HTreeInfo(ids)
	if err != nil {
		return err
	}
	before := make([]float64, len(cands))
	for i := range cands {
		before[i] = cands[i].Score
	}
	share := o.Share
	levels := 0
	for _, in := range info {
		levels = max(levels, len(in.Nodes))
	}
	for l := 0; l < levels; l++ {
		// best and second best per node, so a candidate sees the best
		// of the others.
		type top2 struct{ a, b float64 }
		best := map[uint64]top2{}
		for i, in := range info {
			if l >= len(in.Nodes) || in.Nodes[l] == 0 {
				continue
			}
			t := best[in.Nodes[l]]
			switch s := before[i]; {
			case s > t.a:
				t.a, t.b = s, t.a
			case s > t.b:
				t.b = s
			}
			best[in.Nodes[l]] = t
		}
		for i, in := range info {
			if l >= len(in.Nodes) || in.Nodes[l] == 0 {
				continue
			}
			t := best[in.Nodes[l]]
			other := t.a
			if before[i] == t.a {
				other = t.b
			}
			cands[i].Score += share * other
		}
		share *= o.Decay
	}
	return nil
}
