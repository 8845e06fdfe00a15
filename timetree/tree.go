// Package timetree is H-Mem's temporal-semantic tree (seed 000, section
// 3.2): records are the leaves; above them, levels with growing time
// windows (week, month, year) group the nodes below whose meaning is
// close (cosine of the node's centroid to the child's at least 0.8, 0.7,
// 0.6). The tree is built online, one leaf at a time: a new leaf joins
// the most similar parent of its scope and week if it passes the
// threshold, otherwise a new parent is opened, and so on up. Each node
// knows how many leaves it holds and when the latest arrived, which is what H-Mem's robustness R reads; its extractive
// summary is the text of the leaves closest to its centroid, read on
// demand so that no node keeps text of its own.
//
// The tree holds no text and is rebuilt from the records and their
// vectors in id order on open (the engine owns that), so it is never
// out of step with bbolt and keeps nothing of a forgotten record.
package timetree

import (
	"errors"
	"math"
	"sort"
	"sync"
	"time"
)

// ErrDims is returned by Add for a vector of another length than the
// tree's first.
var ErrDims = errors.New("timetree: vector dimensions differ")

// ScanNodes is how many of a window's newest nodes a new child is
// compared with (the tree grows on its recent edge, as SegTreeMem's right
// frontier does); older nodes of the window keep their children but take
// no new ones. It bounds the cost of an insert whatever the window holds.
const ScanNodes = 64

// Level describes one level above the leaves.
type Level struct {
	Window    func(time.Time) time.Time // the start of the window holding t
	Threshold float64                   // cosine a child needs to join a node
}

// Windows, as H-Mem uses them (weeks start on Monday, UTC).
func Week(t time.Time) time.Time {
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
}

// Month is the first day of t's month.
func Month(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC) }

// Year is the first day of t's year.
func Year(t time.Time) time.Time { return time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC) }

// DefaultLevels are H-Mem's: week, month and year windows above the
// day-stamped leaves, with thresholds 0.8, 0.7 and 0.6.
func DefaultLevels() []Level {
	return []Level{{Week, 0.8}, {Month, 0.7}, {Year, 0.6}}
}

// Tree is a temporal-semantic tree. It is safe for concurrent use.
type Tree struct {
	levels []Level

	mu     sync.RWMutex // guards the fields below
	dims   int
	nodes  map[uint64]*node // inner nodes by id
	leaves map[uint64]*leaf // by record id
	byWin  map[winKey][]uint64
	nextID uint64
}

type winKey struct {
	level int // 1 = the first level above the leaves
	scope string
	start time.Time
}

type leaf struct {
	vec    []float32 // unit length
	at     time.Time
	parent uint64
}

type node struct {
	key      winKey
	sum      []float64 // sum of the children's unit vectors
	children map[uint64]bool
	parent   uint64
	leaves   int       // leaves under it now (H-Mem's n_m)
	last     time.Time // latest leaf time consolidated (H-Mem's r_m); not lowered when a leaf goes
}

// New returns an empty tree with levels (nil means DefaultLevels).
func New(levels []Level) *Tree {
	if levels == nil {
		levels = DefaultLevels()
	}
	return &Tree{levels: levels, nodes: map[uint64]*node{}, leaves: map[uint64]*leaf{}, byWin: map[winKey][]uint64{}}
}

// Add inserts record id of scope, dated at, with vector v, as a leaf, and
// consolidates it upwards. Adding an id again replaces it.
func (t *Tree) Add(id uint64, scope string, at time.Time, v []float32) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dims == 0 {
		t.dims = len(v)
	}
	if len(v) != t.dims || len(v) == 0 {
		return ErrDims
	}
	t.remove(id)
	u := unit(v)
	lf := &leaf{vec: u, at: at.UTC()}
	t.leaves[id] = lf
	vec := toF64(u)
	child, isLeaf := id, true
	for l := range t.levels {
		k := winKey{level: l + 1, scope: scope, start: t.levels[l].Window(lf.at)}
		best, bestCos := uint64(0), t.levels[l].Threshold
		// Only the window's newest nodes are candidates: scanning them
		// all made an insert cost grow with the window, and a day of
		// agent notes (leaves that rarely pass 0.8) quadratic to import.
		cands := t.byWin[k]
		cands = cands[max(0, len(cands)-ScanNodes):]
		for _, nid := range cands {
			if c := cosine(t.nodes[nid].sum, vec); c >= bestCos {
				best, bestCos = nid, c
			}
		}
		joined := best != 0
		if !joined {
			t.nextID++
			best = t.nextID
			t.nodes[best] = &node{key: k, sum: make([]float64, t.dims), children: map[uint64]bool{}}
			t.byWin[k] = append(t.byWin[k], best)
		}
		nd := t.nodes[best]
		nd.children[child] = true
		if isLeaf {
			lf.parent = best
		} else {
			t.nodes[child].parent = best
		}
		// Every ancestor gains the leaf: its centroid, count and time.
		for a := best; a != 0; a = t.nodes[a].parent {
			an := t.nodes[a]
			for i := range an.sum {
				an.sum[i] += vec[i]
			}
			an.leaves++
			if lf.at.After(an.last) {
				an.last = lf.at
			}
		}
		if joined {
			break // the rest of the chain exists
		}
		child, isLeaf = best, false
		vec = unitF64(nd.sum)
	}
	return nil
}

// Remove takes record id out of the tree: its vector leaves every
// ancestor's centroid and nodes left empty are deleted.
func (t *Tree) Remove(id uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.remove(id)
}

func (t *Tree) remove(id uint64) {
	lf, ok := t.leaves[id]
	if !ok {
		return
	}
	delete(t.leaves, id)
	if p := t.nodes[lf.parent]; p != nil {
		delete(p.children, id)
	}
	vec := toF64(lf.vec)
	for a := lf.parent; a != 0; {
		an := t.nodes[a]
		for i := range an.sum {
			an.sum[i] -= vec[i]
		}
		an.leaves--
		next := an.parent
		if an.leaves == 0 {
			delete(t.nodes, a)
			ws := t.byWin[an.key]
			for i, x := range ws {
				if x == a {
					t.byWin[an.key] = append(ws[:i:i], ws[i+1:]...)
					break
				}
			}
			if len(t.byWin[an.key]) == 0 {
				delete(t.byWin, an.key)
			}
			if next != 0 {
				delete(t.nodes[next].children, a)
			}
		}
		a = next
	}
}

// Info is what the tree knows of one record.
type Info struct {
	// Nodes are the record's ancestors, first level up first; 0 where
	// the record has none (it is not in the tree).
	Nodes []uint64
	// N is how many leaves the record's parent holds (H-Mem's n_m: how
	// often its topic was consolidated) and Last the latest of their
	// times (r_m); 0 and the zero time for a record not in the tree.
	N    int
	Last time.Time
}

// Info returns what the tree knows of each id, in order.
func (t *Tree) Info(ids []uint64) []Info {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]Info, len(ids))
	for i, id := range ids {
		out[i].Nodes = make([]uint64, len(t.levels))
		lf, ok := t.leaves[id]
		if !ok {
			continue
		}
		l := 0
		for a := lf.parent; a != 0 && l < len(t.levels); a = t.nodes[a].parent {
			out[i].Nodes[l] = a
			l++
		}
		p := t.nodes[lf.parent]
		out[i].N, out[i].Last = p.leaves, p.last
	}
	return out
}

// Node describes an inner node.
type Node struct {
	ID     uint64
	Level  int // 1 = the first level above the leaves
	Scope  string
	Start  time.Time // its window's start
	Leaves int       // leaves under it now
	Last   time.Time // latest leaf time consolidated
}

// Nodes lists the inner nodes of scope, by level, then window, then id.
func (t *Tree) Nodes(scope string) []Node {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []Node
	for id, n := range t.nodes {
		if n.key.scope == scope {
			out = append(out, Node{ID: id, Level: n.key.level, Scope: scope, Start: n.key.start, Leaves: n.leaves, Last: n.last})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Level != b.Level {
			return a.Level < b.Level
		}
		if !a.Start.Equal(b.Start) {
			return a.Start.Before(b.Start)
		}
		return a.ID < b.ID
	})
	return out
}

// Leaves returns the records under node id, closest to its centroid
// first (ties: lower id first).
func (t *Tree) Leaves(id uint64) []uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n, ok := t.nodes[id]
	if !ok {
		return nil
	}
	var ids []uint64
	var walk func(uint64)
	walk = func(nid uint64) {
		for c := range t.nodes[nid].children {
			if t.nodes[nid].key.level == 1 {
				ids = append(ids, c)
			} else {
				walk(c)
			}
		}
	}
	walk(id)
	cos := make(map[uint64]float64, len(ids))
	for _, l := range ids {
		cos[l] = cosine(n.sum, toF64(t.leaves[l].vec))
	}
	sort.Slice(ids, func(i, j int) bool {
		if cos[ids[i]] != cos[ids[j]] {
			return cos[ids[i]] > cos[ids[j]]
		}
		return ids[i] < ids[j]
	})
	return ids
}

// Summary is the extractive summary of node id: the texts of its leaves
// closest to its centroid, joined, within maxRunes runes (at least the
// first leaf's text, cut). text reads a record's text; a record it does
// not find is skipped.
func (t *Tree) Summary(id uint64, maxRunes int, text func(uint64) (string, bool)) string {
	var out []rune
	for _, l := range t.Leaves(id) {
		s, ok := text(l)
		if !ok {
			continue
		}
		r := []rune(s)
		if len(out) > 0 {
			if len(out)+1+len(r) > maxRunes {
				break
			}
			out = append(out, ' ')
		}
		out = append(out, r...)
		if len(out) >= maxRunes {
			out = out[:maxRunes]
			break
		}
	}
	return string(out)
}

// Len is the number of leaves.
func (t *Tree) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.leaves)
}

func unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if s == 0 {
		return out
	}
	n := math.Sqrt(s)
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

func toF64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func unitF64(v []float64) []float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	out := make([]float64, len(v))
	if s == 0 {
		return out
	}
	n := math.Sqrt(s)
	for i, x := range v {
		out[i] = x / n
	}
	return out
}

// cosine of a centroid sum and a unit vector.
func cosine(sum, u []float64) float64 {
	var dot, ss float64
	for i := range sum {
		dot += sum[i] * u[i]
		ss += sum[i] * sum[i]
	}
	if ss == 0 {
		return 0
	}
	return dot / math.Sqrt(ss)
}
