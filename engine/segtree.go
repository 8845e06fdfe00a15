package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/retrieve"
	"github.com/hmo-dev/hmo/segtree"
)

// The segment tree (SegTreeMem) of every scope lives in bucketSegTree,
// updated in the transaction that changes the records: "n"+id is a
// segment, "p"+leaf a record's level-1 segment, "f"+scope a scope's
// frontier and "r"+scope its top-level segments. Node ids come from the bucket's sequence. metaSegTree names
// the layout it was built with; a store without it, or with another, is
// rebuilt from the records on Open.
var (
	bucketSegTree = []byte("segtree")
	metaSegTree   = []byte("segtree_layout")
)

func (e *Engine) segTreeLayout() string {
	o, _ := e.opts.SegTree.WithDefaults()
	return fmt.Sprintf("segtree/2 levels=%d threshold=%g children=%d embedder=%s", o.Levels, o.Threshold, o.MaxChildren, e.opts.Embedder.Name())
}

// treeStore is one scope's tree in a bbolt transaction.
type treeStore struct {
	e     *Engine // notes the level-1 segments written (event units)
	tx    *bolt.Tx
	b     *bolt.Bucket
	scope string
	dims  int
	// leaves, when not nil, caches the leaves read in tx: an insert
	// re-reads every leaf of its level-1 segment to pick the segment's
	// most central one, and the leaves of a batch are mostly its own
	// records. Only for inserts: records do not change meanwhile.
	leaves map[uint64]treeLeaf
	// cache, when not nil, holds the nodes and id lists read or written
	// in tx, written to the bucket by flush: an insert reads and rewrites
	// the frontier of its scope, which the next insert reads again.
	cache *treeCache
	// shared, with cache, makes Node hand out the cache's own nodes and
	// PutNode keep the node it is given, instead of copies: for
	// segtree.Insert, which writes back with PutNode every node it
	// changes, and whose failure fails the transaction the cache lives
	// in (treeInsert).
	shared bool
}

// treeCache is what a treeStore holds back until flush.
type treeCache struct {
	nodes map[uint64]*segtree.Node // read or written; the store's own copies
	dirty map[uint64]bool          // nodes written since the last flush
	lists map[string][]uint64      // id lists by key (frontier, roots)
	ldirt map[string]bool          // lists written since the last flush
}

// treeLeaf is a leaf's vector, text and scope (nil vector: gone).
type treeLeaf struct {
	vec   []float32
	text  string
	scope string
}

func (e *Engine) treeStore(tx *bolt.Tx, scope string) *treeStore {
	return &treeStore{e: e, tx: tx, b: tx.Bucket(bucketSegTree), scope: scope, dims: e.dims}
}

func nodeKey(id uint64) []byte   { return append([]byte("n"), u64key(id)...) }
func parentKey(id uint64) []byte { return append([]byte("p"), u64key(id)...) }

// cached makes s hold back its writes until flush.
func (s *treeStore) cached() *treeStore {
	s.cache = &treeCache{nodes: map[uint64]*segtree.Node{}, dirty: map[uint64]bool{}, lists: map[string][]uint64{}, ldirt: map[string]bool{}}
	return s
}

// flush writes the nodes and lists held back.
func (s *treeStore) flush() error {
	c := s.cache
	if c == nil {
		return nil
	}
	ids := make([]uint64, 0, len(c.dirty))
	for id := range c.dirty {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if err := s.b.Put(nodeKey(id), encodeNode(c.nodes[id])); err != nil {
			return err
		}
	}
	clear(c.dirty)
	for k := range c.ldirt {
		if err := s.b.Put([]byte(k), encodeIDs(c.lists[k])); err != nil {
			return err
		}
	}
	clear(c.ldirt)
	return nil
}

// reuse is a copy of src in dst's array when it fits; nil for nil and
// empty for empty, as slices.Clone.
func reuse[T any](dst, src []T) []T {
	if len(src) == 0 {
		return slices.Clone(src)
	}
	return append(dst[:0], src...)
}

// cloneNode is a copy of n that shares nothing with it.
func cloneNode(n *segtree.Node) *segtree.Node {
	c := *n
	c.Sum = slices.Clone(n.Sum)
	c.Children = slices.Clone(n.Children)
	return &c
}

func (s *treeStore) Node(id uint64) (*segtree.Node, error) {
	if id == 0 {
		return nil, nil
	}
	if s.cache != nil {
		if n, ok := s.cache.nodes[id]; ok {
			if s.shared {
				return n, nil
			}
			return cloneNode(n), nil
		}
	}
	v := s.b.Get(nodeKey(id))
	if v == nil {
		return nil, nil
	}
	n, err := decodeNode(id, v)
	if err == nil && s.cache != nil {
		if s.shared {
			s.cache.nodes[id] = n
		} else {
			s.cache.nodes[id] = cloneNode(n)
		}
	}
	return n, err
}

func (s *treeStore) PutNode(n *segtree.Node) error {
	if n.Level == 1 {
		s.e.noteSegment(n.ID)
	}
	if s.cache != nil {
		if s.shared {
			s.cache.nodes[n.ID] = n
			s.cache.dirty[n.ID] = true
			return nil
		}
		if c := s.cache.nodes[n.ID]; c != nil {
			// The store's copy takes n's values in its own arrays: no
			// one else holds them (Node hands out copies). A nil slice
			// stays nil, as cloneNode keeps it.
			sum, children := reuse(c.Sum, n.Sum), reuse(c.Children, n.Children)
			*c = *n
			c.Sum, c.Children = sum, children
		} else {
			s.cache.nodes[n.ID] = cloneNode(n)
		}
		s.cache.dirty[n.ID] = true
		return nil
	}
	return s.b.Put(nodeKey(n.ID), encodeNode(n))
}

func (s *treeStore) DeleteNode(id uint64) error {
	s.e.noteSegment(id)
	if s.cache != nil {
		delete(s.cache.nodes, id)
		delete(s.cache.dirty, id)
	}
	return s.b.Delete(nodeKey(id))
}
func (s *treeStore) Parent(leaf uint64) (uint64, error) {
	return keyU64(s.b.Get(parentKey(leaf))), nil
}
func (s *treeStore) SetParent(leaf, node uint64) error { return s.b.Put(parentKey(leaf), u64key(node)) }
func (s *treeStore) DeleteParent(leaf uint64) error    { return s.b.Delete(parentKey(leaf)) }
func (s *treeStore) NewID() (uint64, error)            { return s.b.NextSequence() }

func (s *treeStore) Frontier() ([]uint64, error)  { return s.ids("f"), nil }
func (s *treeStore) SetFrontier(f []uint64) error { return s.setIDs("f", f) }
func (s *treeStore) Roots() ([]uint64, error)     { return s.ids("r"), nil }
func (s *treeStore) SetRoots(r []uint64) error    { return s.setIDs("r", r) }

// ids reads a list of node ids kept for the scope under prefix.
func (s *treeStore) ids(prefix string) []uint64 {
	k := prefix + s.scope
	if s.cache != nil {
		if l, ok := s.cache.lists[k]; ok {
			return slices.Clone(l)
		}
	}
	v := s.b.Get([]byte(k))
	out := make([]uint64, len(v)/8)
	for i := range out {
		out[i] = binary.BigEndian.Uint64(v[8*i:])
	}
	if s.cache != nil {
		s.cache.lists[k] = slices.Clone(out)
	}
	return out
}

func (s *treeStore) setIDs(prefix string, ids []uint64) error {
	k := prefix + s.scope
	if s.cache != nil {
		s.cache.lists[k] = slices.Clone(ids)
		s.cache.ldirt[k] = true
		return nil
	}
	return s.b.Put([]byte(k), encodeIDs(ids))
}

func encodeIDs(ids []uint64) []byte {
	v := make([]byte, 0, 8*len(ids))
	for _, id := range ids {
		v = binary.BigEndian.AppendUint64(v, id)
	}
	return v
}

func (s *treeStore) Leaf(id uint64) ([]float32, string, error) {
	if l, ok := s.leaves[id]; ok {
		return l.vec, l.text, nil
	}
	l := s.readLeaf(id)
	if s.leaves != nil {
		s.leaves[id] = l
	}
	return l.vec, l.text, nil
}

func (s *treeStore) readLeaf(id uint64) treeLeaf {
	r, err := getRecord(s.tx, id)
	if err != nil {
		return treeLeaf{} // gone
	}
	v, err := s.e.storedVectors(s.tx).get(id)
	if err != nil {
		return treeLeaf{}
	}
	return treeLeaf{vec: v, text: r.Text, scope: r.Scope}
}

// encodeNode: parent, level, count, rep, children, sum, summary.
func encodeNode(n *segtree.Node) []byte {
	b := binary.BigEndian.AppendUint64(nil, n.Parent)
	b = binary.BigEndian.AppendUint16(b, uint16(n.Level))
	b = binary.BigEndian.AppendUint32(b, uint32(n.Count))
	b = binary.BigEndian.AppendUint64(b, n.Rep)
	b = binary.BigEndian.AppendUint32(b, uint32(len(n.Children)))
	for _, c := range n.Children {
		b = binary.BigEndian.AppendUint64(b, c)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(n.Sum)))
	for _, x := range n.Sum {
		b = binary.BigEndian.AppendUint32(b, math.Float32bits(x))
	}
	return append(b, n.Summary...)
}

func decodeNode(id uint64, b []byte) (*segtree.Node, error) {
	bad := fmt.Errorf("%w: segment %d", ErrCorrupt, id)
	if len(b) < 26 {
		return nil, bad
	}
	n := &segtree.Node{ID: id, Parent: binary.BigEndian.Uint64(b), Level: int(binary.BigEndian.Uint16(b[8:])),
		Count: int(binary.BigEndian.Uint32(b[10:])), Rep: binary.BigEndian.Uint64(b[14:])}
	nc := int(binary.BigEndian.Uint32(b[22:]))
	b = b[26:]
	if nc < 0 || len(b) < 8*nc+2 {
		return nil, bad
	}
	n.Children = make([]uint64, nc)
	for i := range n.Children {
		n.Children[i] = binary.BigEndian.Uint64(b[8*i:])
	}
	b = b[8*nc:]
	ns := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	if len(b) < 4*ns {
		return nil, bad
	}
	n.Sum = make([]float32, ns)
	for i := range n.Sum {
		n.Sum[i] = math.Float32frombits(binary.BigEndian.Uint32(b[4*i:]))
	}
	n.Summary = string(b[4*ns:])
	return n, nil
}

// treeInsert adds records stored in tx, with the vectors stored for
// them, to their scopes' trees.
func (e *Engine) treeInsert(tx *bolt.Tx, recs []*Record, vecs [][]float32) error {
	leaves := make(map[uint64]treeLeaf, 2*len(recs))
	for i, r := range recs {
		leaves[r.ID] = treeLeaf{vec: vecs[i], text: r.Text, scope: r.Scope}
	}
	stores := map[string]*treeStore{}
	var scopes []string
	for i, r := range recs {
		s := stores[r.Scope]
		if s == nil {
			s = e.treeStore(tx, r.Scope).cached()
			s.leaves, s.shared = leaves, true
			stores[r.Scope] = s
			scopes = append(scopes, r.Scope)
		}
		if err := segtree.Insert(s, e.opts.SegTree, r.ID, vecs[i], r.Text); err != nil {
			return fmt.Errorf("hmo: segment tree: %w", err)
		}
	}
	for _, scope := range scopes {
		if err := stores[scope].flush(); err != nil {
			return fmt.Errorf("hmo: segment tree: %w", err)
		}
	}
	return e.flushEvents(tx, leaves)
}

// treeRemove takes a record out of its scope's tree; call it before the
// record and its vector are deleted.
func (e *Engine) treeRemove(tx *bolt.Tx, r *Record) error {
	vec, err := e.storedVectors(tx).get(r.ID)
	if err != nil {
		vec = make([]float32, e.dims)
	}
	if err := segtree.Remove(e.treeStore(tx, r.Scope), e.opts.SegTree, r.ID, vec); err != nil {
		return fmt.Errorf("hmo: segment tree: %w", err)
	}
	return e.flushEvents(tx, nil)
}

// treeMove follows a record's new vector in its ancestors' centroids.
func (e *Engine) treeMove(tx *bolt.Tx, id uint64, from, to []float32) error {
	if err := segtree.Move(e.treeStore(tx, ""), id, from, to); err != nil {
		return fmt.Errorf("hmo: segment tree: %w", err)
	}
	// A unit's summary is drawn from the turns nearest its centroid: the
	// moved turn's unit is written again even when Move kept its node.
	if seg, _ := e.treeStore(tx, "").Parent(id); seg != 0 {
		e.noteSegment(seg)
	}
	return e.flushEvents(tx, nil)
}

// syncSegTree rebuilds every scope's tree from the records when the store
// has none or one built with another layout (a store from before the
// tree, other options, another embedder).
func (e *Engine) syncSegTree() error {
	want := e.segTreeLayout()
	if current, err := e.metaIs(metaSegTree, want); err != nil || current {
		return err
	}
	return e.db.Update(func(tx *bolt.Tx) error { return e.rebuildSegTree(tx, want) })
}

// rebuildSegTree builds every tree afresh, inserting the records in id
// (arrival) order.
func (e *Engine) rebuildSegTree(tx *bolt.Tx, layout string) error {
	if _, err := freshBucket(tx, bucketSegTree); err != nil {
		return err
	}
	vs := e.storedVectors(tx)
	err := eachRecord(tx, func(k []byte, r *Record) error {
		vec, err := vs.getKey(k)
		if err != nil {
			return fmt.Errorf("record %d: %w", r.ID, err)
		}
		return e.treeInsert(tx, []*Record{r}, [][]float32{vec})
	})
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketMeta).Put(metaSegTree, []byte(layout)); err != nil {
		return err
	}
	// The units were written segment by segment as the tree grew; a
	// rebuild writes them once more from the finished tree, which also
	// drops the old tree's units.
	return e.rebuildEvents(tx, e.eventsVersion())
}

// Segments implements retrieve.Tree over the archive: each leaf's
// level-1 segment and that segment's ancestors up to levels above it.
func (e *Engine) segments(leaves []uint64, levels int) (*retrieve.Forest, error) {
	f := &retrieve.Forest{Parent: map[uint64]uint64{}, Nodes: map[uint64]*retrieve.Segment{}}
	err := e.db.View(func(tx *bolt.Tx) error {
		s := e.treeStore(tx, "")
		if s.b == nil {
			return nil
		}
		for _, leaf := range leaves {
			id, _ := s.Parent(leaf)
			if id == 0 {
				continue
			}
			f.Parent[leaf] = id
			for l := 0; l < levels && id != 0; l++ {
				if _, ok := f.Nodes[id]; ok {
					break
				}
				n, err := s.Node(id)
				if err != nil || n == nil {
					return err
				}
				f.Nodes[id] = &retrieve.Segment{ID: id, Parent: n.Parent, Level: n.Level, Children: n.Children}
				id = n.Parent
			}
		}
		return nil
	})
	return f, err
}

// SegmentSummaries returns the extractive summary of every segment of
// every scope's tree, by segment id; for inspection and tests.
func (e *Engine) SegmentSummaries() (map[uint64]string, error) {
	out := map[uint64]string{}
	err := e.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketSegTree).Cursor()
		for k, v := c.Seek([]byte("n")); k != nil && k[0] == 'n'; k, v = c.Next() {
			n, err := decodeNode(keyU64(k[1:]), v)
			if err != nil {
				return err
			}
			out[n.ID] = n.Summary
		}
		return nil
	})
	return out, err
}
