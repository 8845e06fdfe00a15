package segtree_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/segtree"
)

// memStore is a Store in maps, for tests.
type memStore struct {
	nodes   map[uint64]*segtree.Node
	parents map[uint64]uint64
	front   []uint64
	roots   []uint64
	next    uint64
	leaves  map[uint64]leaf
}

type leaf struct {
	vec  []float32
	text string
}

func newStore() *memStore {
	return &memStore{nodes: map[uint64]*segtree.Node{}, parents: map[uint64]uint64{}, leaves: map[uint64]leaf{}, next: 1000}
}

func (m *memStore) Node(id uint64) (*segtree.Node, error) {
	n, ok := m.nodes[id]
	if !ok {
		return nil, nil
	}
	c := *n
	c.Children = slices.Clone(n.Children)
	c.Sum = slices.Clone(n.Sum)
	return &c, nil
}
func (m *memStore) PutNode(n *segtree.Node) error   { c := *n; m.nodes[n.ID] = &c; return nil }
func (m *memStore) DeleteNode(id uint64) error      { delete(m.nodes, id); return nil }
func (m *memStore) Parent(l uint64) (uint64, error) { return m.parents[l], nil }
func (m *memStore) SetParent(l, n uint64) error     { m.parents[l] = n; return nil }
func (m *memStore) DeleteParent(l uint64) error     { delete(m.parents, l); return nil }
func (m *memStore) Frontier() ([]uint64, error)     { return slices.Clone(m.front), nil }
func (m *memStore) SetFrontier(f []uint64) error    { m.front = slices.Clone(f); return nil }
func (m *memStore) NewID() (uint64, error)          { m.next++; return m.next, nil }
func (m *memStore) Roots() ([]uint64, error)        { return slices.Clone(m.roots), nil }
func (m *memStore) SetRoots(r []uint64) error       { m.roots = slices.Clone(r); return nil }
func (m *memStore) Leaf(id uint64) ([]float32, string, error) {
	l, ok := m.leaves[id]
	if !ok {
		return nil, "", nil
	}
	return l.vec, l.text, nil
}

func (m *memStore) insert(t *testing.T, o segtree.Options, id uint64, vec []float32, text string) {
	t.Helper()
	m.leaves[id] = leaf{vec, text}
	if err := segtree.Insert(m, o, id, vec, text); err != nil {
		t.Fatal(err)
	}
}

func (m *memStore) remove(t *testing.T, o segtree.Options, id uint64) {
	t.Helper()
	l := m.leaves[id]
	delete(m.leaves, id)
	if err := segtree.Remove(m, o, id, l.vec); err != nil {
		t.Fatal(err)
	}
}

// segmentsOf lists the leaves of each level-1 segment, in time order.
func (m *memStore) segmentsOf() [][]uint64 {
	var out [][]uint64
	for _, n := range m.nodes {
		if n.Level == 1 {
			out = append(out, slices.Clone(n.Children))
		}
	}
	slices.SortFunc(out, func(a, b []uint64) int { return int(a[0]) - int(b[0]) })
	return out
}

var (
	topicA = []float32{1, 0, 0}
	topicB = []float32{0, 1, 0}
	topicC = []float32{0, 0, 1}
)

func TestInsertSegmentsByTopic(t *testing.T) {
	o := segtree.Options{Levels: 3, Threshold: 0.5}
	for _, tc := range []struct {
		name string
		vecs [][]float32
		want [][]uint64
	}{
		{"one topic", [][]float32{topicA, topicA, topicA}, [][]uint64{{1, 2, 3}}},
		{"topic change opens a segment", [][]float32{topicA, topicA, topicB, topicB}, [][]uint64{{1, 2}, {3, 4}}},
		{"a return is a new segment (time order)", [][]float32{topicA, topicB, topicA}, [][]uint64{{1}, {2}, {3}}},
		{"a mixed turn joins", [][]float32{topicA, {0.8, 0.6, 0}, topicC}, [][]uint64{{1, 2}, {3}}},
	} {
		m := newStore()
		for i, v := range tc.vecs {
			m.insert(t, o, uint64(i+1), v, "turn")
		}
		if got := m.segmentsOf(); !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("%s: segments %v, want %v", tc.name, got, tc.want)
		}
		// Every leaf has a parent that lists it.
		for i := range tc.vecs {
			p := m.parents[uint64(i+1)]
			if n := m.nodes[p]; n == nil || !slices.Contains(n.Children, uint64(i+1)) {
				t.Errorf("%s: leaf %d parent %d does not hold it", tc.name, i+1, p)
			}
		}
	}
}

func TestMaxChildren(t *testing.T) {
	o := segtree.Options{Levels: 3, Threshold: 0.5, MaxChildren: 3}
	m := newStore()
	for i := range 7 {
		m.insert(t, o, uint64(i+1), topicA, "same topic")
	}
	if got, want := m.segmentsOf(), [][]uint64{{1, 2, 3}, {4, 5, 6}, {7}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("segments %v, want %v", got, want)
	}
}

func TestSummaryIsCentralLeaf(t *testing.T) {
	o := segtree.Options{Levels: 2, Threshold: 0.3}
	m := newStore()
	m.insert(t, o, 1, []float32{1, 0.4, 0}, "off to one side")
	m.insert(t, o, 2, []float32{1, 0, 0}, "the central turn")
	m.insert(t, o, 3, []float32{1, -0.4, 0}, "off to the other side")
	n := m.nodes[m.parents[1]]
	if n.Summary != "the central turn" || n.Count != 3 {
		t.Errorf("summary %q count %d, want the central turn, 3", n.Summary, n.Count)
	}
}

func TestRemove(t *testing.T) {
	o := segtree.Options{Levels: 3, Threshold: 0.5}
	m := newStore()
	m.insert(t, o, 1, topicA, "apples are red")
	m.insert(t, o, 2, topicA, "secret apple pie")
	m.insert(t, o, 3, topicB, "bananas")
	// Forgetting 2 leaves no summary holding its text.
	m.remove(t, o, 2)
	for _, n := range m.nodes {
		if strings.Contains(n.Summary, "secret") {
			t.Errorf("node %d keeps forgotten text %q", n.ID, n.Summary)
		}
		if slices.Contains(n.Children, 2) {
			t.Errorf("node %d keeps forgotten leaf", n.ID)
		}
	}
	if _, ok := m.parents[2]; ok {
		t.Error("forgotten leaf keeps a parent")
	}
	// Forgetting the newest segment's only leaf drops it; the frontier
	// moves back and the next leaf of topic A joins the first segment.
	m.remove(t, o, 3)
	if got := m.segmentsOf(); !slices.EqualFunc(got, [][]uint64{{1}}, slices.Equal) {
		t.Fatalf("after removals: %v", got)
	}
	m.insert(t, o, 4, topicA, "apple again")
	if got := m.segmentsOf(); !slices.EqualFunc(got, [][]uint64{{1, 4}}, slices.Equal) {
		t.Errorf("after removals and insert: %v, want [[1 4]]", got)
	}
	// Removing everything leaves nothing.
	m.remove(t, o, 1)
	m.remove(t, o, 4)
	if len(m.nodes) != 0 {
		t.Errorf("%d nodes left", len(m.nodes))
	}
}

func TestMove(t *testing.T) {
	o := segtree.Options{Levels: 2, Threshold: 0.5}
	m := newStore()
	m.insert(t, o, 1, topicA, "a")
	if err := segtree.Move(m, 1, topicA, topicB); err != nil {
		t.Fatal(err)
	}
	if got := m.nodes[m.parents[1]].Sum; !slices.Equal(got, topicB) {
		t.Errorf("sum %v, want %v", got, topicB)
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []segtree.Options{{Levels: 1}, {Levels: 9}, {Threshold: 2}, {MaxChildren: 1}, {SummaryRunes: -1}} {
		if _, err := o.WithDefaults(); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
