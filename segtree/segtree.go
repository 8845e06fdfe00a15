// Package segtree is SegTreeMem (seed 004): a temporally ordered segment
// tree over one scope's records, updated online along its right frontier.
//
// Leaves are records in arrival order. Internal nodes (segments) cover
// contiguous runs of leaves; level 1 segments hold leaves, level ℓ > 1
// segments hold segments of level ℓ − 1, up to Options.Levels − 1 below a
// virtual root. A new leaf is compared (cosine) with the frontier — the
// rightmost segment of each level — and attached under the most
// specific compatible one (the lowest level whose centroid's cosine with
// the leaf reaches Options.Threshold), through a chain of new segments
// down to level 1; when none does (the paper's NONE) it opens a new chain
// under the root. Unlike the paper's unbounded root growth, the height is
// fixed, so the tree stays shallow on long histories.
//
// Each segment keeps the sum of its leaves' vectors (its centroid is the
// annotation embedding used for compatibility) and an extractive summary:
// the text of its most central leaf, at most Options.SummaryRunes runes.
// Remove takes a forgotten leaf out, recomputes the centroids and
// summaries of its ancestors from the remaining leaves, and drops empty
// segments, so no forgotten text survives in a summary.
//
// The tree lives in a Store (the engine keeps it in bbolt, in the same
// transaction as the records); this package holds no state of its own.
package segtree

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"
)

// ErrCorrupt is returned when the stored tree is inconsistent.
var ErrCorrupt = errors.New("segtree: corrupt tree")

// Options configure the tree.
type Options struct {
	// Levels is the number of levels including the leaves and the
	// virtual root: 3 gives leaves, segments and episodes. Default
	// DefaultLevels.
	Levels int
	// Threshold is the cosine between a new leaf and a frontier
	// segment's centroid at or above which the leaf may join it; below
	// it for every frontier segment (NONE), the leaf opens a new chain
	// under the root. Default DefaultThreshold.
	Threshold float64
	// SummaryRunes bounds a segment's extractive summary. Default
	// DefaultSummaryRunes.
	SummaryRunes int
	// MaxChildren bounds a segment's children: a full segment takes no
	// more, whatever its compatibility. A centroid of many leaves drifts
	// toward the conversation's mean and resembles every new turn, so
	// without a bound one segment would absorb a whole conversation.
	// Default DefaultMaxChildren.
	MaxChildren int
}

// Defaults.
const (
	DefaultLevels       = 4   // leaves, segments, episodes, and the root
	DefaultThreshold    = 0.5 // cosine of a leaf with a segment's centroid
	DefaultSummaryRunes = 200 // runes of a segment's summary
	DefaultMaxChildren  = 16  // children of a segment
	maxLevels           = 8   // bound of Options.Levels
)

// WithDefaults fills zero fields and validates o.
func (o Options) WithDefaults() (Options, error) {
	if o.Levels == 0 {
		o.Levels = DefaultLevels
	}
	if o.Threshold == 0 {
		o.Threshold = DefaultThreshold
	}
	if o.SummaryRunes == 0 {
		o.SummaryRunes = DefaultSummaryRunes
	}
	if o.MaxChildren == 0 {
		o.MaxChildren = DefaultMaxChildren
	}
	if o.MaxChildren < 2 || o.Levels < 2 || o.Levels > maxLevels || o.Threshold < -1 || o.Threshold > 1 || math.IsNaN(o.Threshold) || o.SummaryRunes < 1 {
		return o, fmt.Errorf("segtree: invalid options %+v", o)
	}
	return o, nil
}

// Node is a segment.
type Node struct {
	ID       uint64
	Parent   uint64 // 0 under the root
	Level    int    // 1 holds leaves
	Sum      []float32
	Count    int      // leaves below
	Children []uint64 // leaf ids at level 1, node ids above, in time order
	Rep      uint64   // the most central leaf: its text is the summary
	Summary  string
}

// Centroid is the unit mean of the leaves' vectors, nil when empty.
func (n *Node) Centroid() []float32 { return unit(n.Sum) }

// Store holds one scope's tree. Implementations need not be safe for
// concurrent use; the caller serialises updates.
type Store interface {
	Node(id uint64) (*Node, error) // nil, nil when there is none
	PutNode(n *Node) error
	DeleteNode(id uint64) error
	// Parent is the level-1 segment of a leaf, 0 when it has none.
	Parent(leaf uint64) (uint64, error)
	SetParent(leaf, node uint64) error
	DeleteParent(leaf uint64) error
	// Frontier lists the rightmost segment of levels 1, 2, ... (0 where
	// a level has none).
	Frontier() ([]uint64, error)
	SetFrontier(f []uint64) error
	// Roots lists the top-level segments (the virtual root's children)
	// in time order.
	Roots() ([]uint64, error)
	SetRoots(r []uint64) error
	// NewID returns an unused node id.
	NewID() (uint64, error)
	// Leaf returns a live leaf's vector and text, for recomputing
	// centroids and summaries after a removal.
	Leaf(id uint64) ([]float32, string, error)
}

// Insert adds a leaf (a record) with its vector and text at the right end
// of the tree.
func Insert(s Store, o Options, leaf uint64, vec []float32, text string) error {
	o, err := o.WithDefaults()
	if err != nil {
		return err
	}
	top := o.Levels - 1 // segment levels are 1..top
	front, err := s.Frontier()
	if err != nil {
		return err
	}
	front = append(front, make([]uint64, max(0, top-len(front)))...)[:top]
	// The lowest compatible frontier segment, or none. (Centroids of
	// larger segments drift toward the conversation's mean and resemble
	// every turn, so "most compatible" would favour the top: the leaf
	// continues the most specific segment it fits.)
	attach := 0
	nodes := make([]*Node, top)
	for lv := 1; lv <= top; lv++ {
		if front[lv-1] == 0 {
			continue
		}
		n, err := s.Node(front[lv-1])
		if err != nil {
			return err
		}
		if n == nil {
			return fmt.Errorf("%w: frontier node %d missing", ErrCorrupt, front[lv-1])
		}
		nodes[lv-1] = n
		if len(n.Children) >= o.MaxChildren {
			continue
		}
		if attach == 0 && centroidCos(n.Sum, vec) >= o.Threshold {
			attach = lv
		}
	}
	// A chain of new segments from level 1 up to attach-1 (or top when
	// none was compatible), hung under the chosen segment or the root.
	upto := attach - 1
	if attach == 0 {
		upto = top
	}
	child := leaf
	var parentOf uint64
	for lv := 1; lv <= upto; lv++ {
		id, err := s.NewID()
		if err != nil {
			return err
		}
		n := &Node{ID: id, Level: lv, Children: []uint64{child}}
		if lv == 1 {
			parentOf = id
		} else {
			nodes[lv-2].Parent = id
			if err := s.PutNode(nodes[lv-2]); err != nil {
				return err
			}
		}
		nodes[lv-1] = n
		front[lv-1] = id
		child = id
	}
	if attach == 0 {
		roots, err := s.Roots()
		if err != nil {
			return err
		}
		if err := s.SetRoots(append(roots, child)); err != nil {
			return err
		}
	}
	if attach > 0 {
		n := nodes[attach-1]
		n.Children = append(n.Children, child)
		if attach == 1 {
			parentOf = n.ID
		} else {
			nodes[attach-2].Parent = n.ID
		}
	}
	if err := s.SetParent(leaf, parentOf); err != nil {
		return err
	}
	// The new leaf joins every segment on the path to the root.
	for lv := 1; lv <= top; lv++ {
		n := nodes[lv-1]
		if n == nil || (attach == 0 && lv > upto) {
			continue
		}
		n.Sum = addVec(n.Sum, vec, 1)
		n.Count++
		switch {
		case n.Level == 1 && n.Rep != 0:
			// A level-1 segment is small (MaxChildren): pick its most
			// central leaf afresh, the centroid has moved.
			if err := resummarise(s, o, n); err != nil {
				return err
			}
		case n.Rep == 0 || centrality(n, vec) > repCentrality(s, n):
			n.Rep, n.Summary = leaf, clip(text, o.SummaryRunes)
		}
		if err := s.PutNode(n); err != nil {
			return err
		}
	}
	return s.SetFrontier(front)
}

func centrality(n *Node, vec []float32) float64 { return centroidCos(n.Sum, vec) }

func repCentrality(s Store, n *Node) float64 {
	v, _, err := s.Leaf(n.Rep)
	if err != nil || v == nil {
		return math.Inf(-1)
	}
	return centrality(n, v)
}

// Remove takes a leaf out of the tree. vec is the leaf's vector (the
// caller reads it before deleting it). Ancestors' centroids and summaries
// are recomputed without it; segments left empty are deleted and the
// frontier follows.
func Remove(s Store, o Options, leaf uint64, vec []float32) error {
	o, err := o.WithDefaults()
	if err != nil {
		return err
	}
	pid, err := s.Parent(leaf)
	if err != nil || pid == 0 {
		return err
	}
	if err := s.DeleteParent(leaf); err != nil {
		return err
	}
	child, removedChild := leaf, true
	frontierChanged := false
	for id := pid; id != 0; {
		n, err := s.Node(id)
		if err != nil {
			return err
		}
		if n == nil {
			return fmt.Errorf("%w: node %d missing", ErrCorrupt, id)
		}
		if removedChild {
			n.Children = slices.DeleteFunc(n.Children, func(c uint64) bool { return c == child })
		}
		n.Sum = addVec(n.Sum, vec, -1)
		n.Count--
		next := n.Parent
		if len(n.Children) == 0 || n.Count <= 0 {
			if err := s.DeleteNode(n.ID); err != nil {
				return err
			}
			if n.Parent == 0 {
				roots, err := s.Roots()
				if err != nil {
					return err
				}
				if err := s.SetRoots(slices.DeleteFunc(roots, func(r uint64) bool { return r == n.ID })); err != nil {
					return err
				}
			}
			child, removedChild, frontierChanged = n.ID, true, true
			id = next
			continue
		}
		if n.Rep == leaf || removedChild && n.Level > 1 {
			if err := resummarise(s, o, n); err != nil {
				return err
			}
		}
		if err := s.PutNode(n); err != nil {
			return err
		}
		child, removedChild = n.ID, false
		id = next
	}
	if frontierChanged {
		return fixFrontier(s, o)
	}
	return nil
}

// resummarise picks the leaf nearest n's centroid among its leaves (level
// 1) or among its children's representatives (above).
func resummarise(s Store, o Options, n *Node) error {
	c := n.Centroid()
	best, bestCos := uint64(0), math.Inf(-1)
	var bestText string
	for _, ch := range n.Children {
		leaf := ch
		if n.Level > 1 {
			cn, err := s.Node(ch)
			if err != nil {
				return err
			}
			if cn == nil {
				continue
			}
			leaf = cn.Rep
		}
		v, text, err := s.Leaf(leaf)
		if err != nil {
			return err
		}
		if v == nil {
			continue
		}
		if x := cos(c, v); x > bestCos {
			best, bestCos, bestText = leaf, x, text
		}
	}
	n.Rep, n.Summary = best, clip(bestText, o.SummaryRunes)
	return nil
}

// fixFrontier rebuilds the frontier from the newest top-level segment
// down along the rightmost children, after segments were deleted.
func fixFrontier(s Store, o Options) error {
	top := o.Levels - 1
	front := make([]uint64, top)
	roots, err := s.Roots()
	if err != nil {
		return err
	}
	if len(roots) > 0 {
		id := roots[len(roots)-1]
		for lv := top; lv >= 1 && id != 0; lv-- {
			n, err := s.Node(id)
			if err != nil {
				return err
			}
			if n == nil {
				return fmt.Errorf("%w: node %d missing", ErrCorrupt, id)
			}
			front[lv-1] = id
			id = 0
			if lv > 1 && len(n.Children) > 0 {
				id = n.Children[len(n.Children)-1]
			}
		}
	}
	return s.SetFrontier(front)
}

func addVec(sum, v []float32, sign float32) []float32 {
	if sum == nil {
		sum = make([]float32, len(v))
	}
	if len(sum) != len(v) {
		return sum
	}
	for i := range v {
		sum[i] += sign * v[i]
	}
	return sum
}

func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return nil
	}
	out := make([]float32, len(v))
	inv := 1 / math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// centroidCos is cos(unit(sum), b), computed without materialising the
// centroid: the same operations in the same order, so the same bits.
func centroidCos(sum, b []float32) float64 {
	var n float64
	for _, x := range sum {
		n += float64(x) * float64(x)
	}
	if n == 0 || len(sum) != len(b) {
		return math.Inf(-1)
	}
	inv := 1 / math.Sqrt(n)
	var d, nb float64
	for i := range sum {
		a := float32(float64(sum[i]) * inv)
		d += float64(a) * float64(b[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if nb == 0 {
		return math.Inf(-1)
	}
	return d / math.Sqrt(nb)
}

func cos(a, b []float32) float64 {
	if len(a) == 0 || len(a) != len(b) {
		return math.Inf(-1)
	}
	var d, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if nb == 0 {
		return math.Inf(-1)
	}
	return d / math.Sqrt(nb)
}

func clip(s string, runes int) string {
	// []rune counts an invalid byte as one rune, as RuneCountInString
	// does: a text that fits is returned without the conversion.
	if utf8.RuneCountInString(s) <= runes {
		return s
	}
	r := []rune(s)
	if len(r) <= runes {
		return s
	}
	return string(r[:runes])
}

// Move replaces a leaf's vector in its ancestors' centroids (the leaf was
// re-embedded, e.g. because its context turn was forgotten).
func Move(s Store, leaf uint64, from, to []float32) error {
	pid, err := s.Parent(leaf)
	for id := pid; err == nil && id != 0; {
		var n *Node
		if n, err = s.Node(id); err != nil || n == nil {
			break
		}
		n.Sum = addVec(addVec(n.Sum, from, -1), to, 1)
		if err = s.PutNode(n); err != nil {
			break
		}
		id = n.Parent
	}
	return err
}
