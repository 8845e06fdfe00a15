package hnsw

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/hmo-dev/hmo/engine"
)

var _ engine.VectorIndex = (*Index)(nil)

// Index is a cosine-similarity vector index keyed by record id: an exact
// scan while it holds at most Options.ExactBelow live vectors, an HNSW
// graph from github.com/coder/hnsw beyond that.
//
// It is safe for concurrent use. Searches run in parallel with each other
// and with Save; each insertion into the graph excludes them briefly;
// Apply calls run one at a time, and a graph build or compaction runs
// beside the searches, which use the previous state until it is swapped in.
//
// Record ids map to slots, which are the graph's keys. A slot is never
// reused within a graph: replacing an id tombstones its old slot and adds
// a new one, deleting an id tombstones its slot. Compaction drops the
// tombstones and builds a new graph over the live vectors, numbering their
// slots afresh.
type Index struct {
	dir  string
	opts Options

	// Lock order: applyMu, saveMu, mu.

	applyMu sync.Mutex // serialises Apply and Close, so a writer may read the fields under mu without it
	alloc   arena      // storage for new vectors; guarded by applyMu

	saveMu       sync.Mutex // serialises Save and Close; guards the three fields below
	gen          uint64     // generation of the saved meta file; 0 if never saved
	graphFile    string     // graph file the saved meta names; "" if none
	savedVersion uint64     // version at the last successful save

	mu        sync.RWMutex      // guards the fields below; Search holds it for reading
	g         *graph            // nil until the live count passes ExactBelow, or after a coder/hnsw panic
	vecs      [][]float32       // slot -> unit vector
	ids       []uint64          // slot -> record id
	dead      []bool            // slot -> tombstoned
	slots     map[uint64]uint64 // live record id -> slot
	ntomb     int               // number of tombstoned slots
	watermark uint64            // last change-log sequence applied
	version   uint64            // counts changes, so Save can skip a clean index
	closed    bool
}

// Open opens the index saved in dir, or an empty one if dir holds none,
// creating dir (mode 0700) if needed. opts must set Dims; other zero fields
// take their defaults. A meta file that is damaged, of another format
// version or saved with other Dims gives an error wrapping ErrCorrupt:
// remove dir and rebuild the index from the store. A missing or damaged
// graph file is no error: the graph is rebuilt from the saved vectors at
// the next Apply, and searches scan exactly until then.
func Open(dir string, opts *Options) (*Index, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("hnsw: open: %w", err)
	}
	x := &Index{
		dir:   dir,
		opts:  o,
		slots: make(map[uint64]uint64),
		alloc: arena{dims: o.Dims},
	}
	if err := x.load(); err != nil {
		return nil, fmt.Errorf("hnsw: open %s: %w", dir, err)
	}
	x.removeStale()
	return x, nil
}

// Apply adds vectors and removes ids, then records watermark as the last
// change-log sequence applied. Adding an id that is present replaces its
// vector; an id both added and deleted in one call ends deleted; deleting
// an absent id does nothing. Vectors are normalised to unit length. If any
// vector is invalid (ErrDimension, ErrNotFinite, ErrZeroVector) nothing
// changes.
//
// Searches run between the vectors of a batch, so they may see part of
// it. When tombstones exceed Options.CompactRatio of the slots, Apply
// compacts the slots and rebuilds the graph from the live vectors before
// it returns, and it builds the graph when the live count first passes
// Options.ExactBelow; searches go on meanwhile, other Apply calls wait.
// If coder/hnsw fails while building, Apply returns an error wrapping
// ErrInternal with the changes applied: searches scan exactly until a
// later Apply builds the graph.
func (x *Index) Apply(adds []engine.VectorDoc, deletes []uint64, watermark uint64) error {
	norms := make([]float64, len(adds))
	for i, d := range adds {
		n, err := checkVector(d.Vector, x.opts.Dims)
		if err != nil {
			return fmt.Errorf("hnsw: add id %d: %w", d.ID, err)
		}
		norms[i] = n
	}
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	if x.closed {
		return ErrClosed
	}
	for i, d := range adds {
		v := x.alloc.alloc()
		normalize(v, d.Vector, norms[i])
		x.mu.Lock()
		x.remove(d.ID)
		x.add(d.ID, v)
		x.mu.Unlock()
	}
	x.mu.Lock()
	for _, id := range deletes {
		x.remove(id)
	}
	x.watermark = watermark
	x.version++
	needGraph := len(x.slots) > x.opts.ExactBelow
	compact := float64(x.ntomb) > x.opts.CompactRatio*float64(len(x.ids)) || (needGraph && x.g == nil)
	x.mu.Unlock()
	if compact {
		return x.rebuild(needGraph)
	}
	return nil
}

// add appends v as a new slot for id and inserts it into the graph, if
// there is one. A panic inside the graph drops the graph; Apply then
// rebuilds it. The caller holds x.mu.
func (x *Index) add(id uint64, v []float32) {
	s := uint64(len(x.ids))
	x.vecs = append(x.vecs, v)
	x.ids = append(x.ids, id)
	x.dead = append(x.dead, false)
	x.slots[id] = s
	x.version++
	if x.g != nil && graphAdd(x.g, &x.opts, s, v) != nil {
		x.g = nil
	}
}

// remove tombstones id's slot, if id is live. The caller holds x.mu.
func (x *Index) remove(id uint64) {
	s, ok := x.slots[id]
	if !ok {
		return
	}
	delete(x.slots, id)
	x.dead[s] = true
	x.ntomb++
	x.version++
}

// rebuild compacts the slots to the live vectors, in slot order, builds a
// new graph over them if withGraph and swaps them in. The caller holds
// x.applyMu, so the slots cannot change meanwhile and are read without
// x.mu; searches go on with the old state. If the new graph cannot be
// built, the compacted slots are swapped in without one: searches scan
// exactly and the next Apply tries again.
func (x *Index) rebuild(withGraph bool) error {
	n := len(x.slots)
	vecs := make([][]float32, 0, n)
	ids := make([]uint64, 0, n)
	slots := make(map[uint64]uint64, n)
	alloc := arena{dims: x.opts.Dims}
	for s, v := range x.vecs {
		if x.dead[s] {
			continue
		}
		c := alloc.alloc()
		copy(c, v)
		slots[x.ids[s]] = uint64(len(vecs))
		vecs = append(vecs, c)
		ids = append(ids, x.ids[s])
	}
	var g *graph
	var err error
	if withGraph {
		g = newGraph(&x.opts)
		for s, v := range vecs {
			if err = graphAdd(g, &x.opts, uint64(s), v); err != nil {
				g, err = nil, fmt.Errorf("hnsw: rebuild: %w", err)
				break
			}
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.g, x.vecs, x.ids, x.dead, x.slots = g, vecs, ids, make([]bool, n), slots
	x.ntomb, x.alloc = 0, alloc
	x.version++
	return err
}

// Watermark is the last change-log sequence applied: the watermark of the
// last Apply, or of the saved index after Open (0 if never saved).
func (x *Index) Watermark() uint64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.watermark
}

// Len is the number of live vectors.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.slots)
}

// Close saves the index and releases it. Later calls return ErrClosed.
func (x *Index) Close() error {
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	x.saveMu.Lock()
	defer x.saveMu.Unlock()
	err := x.save()
	if errors.Is(err, ErrClosed) {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closed = true
	x.g, x.vecs, x.ids, x.dead, x.slots = nil, nil, nil, nil, nil
	x.alloc = arena{}
	return err
}
