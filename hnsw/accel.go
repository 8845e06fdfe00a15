package hnsw

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/hmo-dev/hmo/engine"
)

// Exact is the exact index an Accelerated puts a graph in front of; the
// vecfile package's Index is one. Its rows are in id order.
type Exact interface {
	engine.FilteredVectorIndex
	engine.Compacter
	// RangeAfter calls fn with every live id above after, ascending, and
	// its unit vector (valid during the call only), until fn returns
	// false.
	RangeAfter(after uint64, fn func(id uint64, v []float32) bool) error
	// SearchAfter is Search over the ids above after.
	SearchAfter(q []float32, k int, after uint64) ([]engine.VectorHit, error)
	// Live reports whether id has a live vector.
	Live(id uint64) bool
}

// Defaults for AccelOptions.
const (
	// DefaultGraphAbove is the live-vector count above which a graph is
	// built. The exact scan of 100-d float32 vectors on two cores answers
	// in about 1 ms at 100K and 15 ms at 1M (BENCHMARKS.md), inside the
	// query budget, while coder/hnsw's graph costs about 2 KB of heap per
	// vector and builds at hundreds of vectors a second: below this size
	// the graph does not pay.
	DefaultGraphAbove = 2_000_000
	// DefaultBuildBatch is the number of vectors inserted into the graph
	// between two checks for Close, and between two Saves of the graph
	// the first time it is built.
	DefaultBuildBatch = 1024
	// DefaultSaveEvery is the number of insertions after which the
	// builder saves the graph, so that a restart resumes the build.
	DefaultSaveEvery = 50_000
)

// AccelOptions configure an Accelerated. Zero fields take the defaults.
type AccelOptions struct {
	// GraphAbove is the live-vector count above which the graph is built
	// and used. Default DefaultGraphAbove; negative means never.
	GraphAbove int
	// Graph configures the graph (Dims is required). ExactBelow is
	// forced to -1: the Accelerated decides when the graph is used.
	Graph Options
	// SaveEvery is the number of insertions between saves of the graph.
	// Default DefaultSaveEvery.
	SaveEvery int
}

// Accelerated is a vector index that answers from an exact index and,
// once the archive is larger than GraphAbove, from an HNSW graph built in
// the background: a goroutine owned by the Accelerated inserts the exact
// index's new rows into the graph, off the write path, and saves it every
// SaveEvery insertions. Until the graph holds a row, the exact index's
// scan of the rows above the graph's last id answers for it; filtered
// searches always scan exactly. Opening an Accelerated loads no graph: the
// builder does, in the background, when the archive is large enough.
//
// It is safe for concurrent use. Close stops the builder.
type Accelerated struct {
	exact Exact
	dir   string
	opts  AccelOptions

	mu      sync.RWMutex // guards ann and covered
	ann     *Index       // the graph; nil until loaded or built
	covered uint64       // every live id up to covered is in ann

	pendMu  sync.Mutex // guards pending
	pending []uint64   // deletions not yet applied to ann

	kick  chan struct{} // wakes the builder
	stop  chan struct{} // closed by Close
	done  chan struct{} // closed when the builder returns
	errMu sync.Mutex
	err   error // the builder's last error, for Close
}

var (
	_ engine.FilteredVectorIndex = (*Accelerated)(nil)
	_ engine.Compacter           = (*Accelerated)(nil)
	_ engine.VectorReader        = (*Accelerated)(nil)
)

// Accelerate puts a graph kept in dir in front of exact, and starts the
// builder. The Accelerated owns exact: Close closes it.
func Accelerate(exact Exact, dir string, opts *AccelOptions) (*Accelerated, error) {
	var o AccelOptions
	if opts != nil {
		o = *opts
	}
	if o.GraphAbove == 0 {
		o.GraphAbove = DefaultGraphAbove
	}
	if o.SaveEvery == 0 {
		o.SaveEvery = DefaultSaveEvery
	}
	o.Graph.ExactBelow = -1
	if _, err := o.Graph.withDefaults(); err != nil {
		return nil, err
	}
	a := &Accelerated{
		exact: exact, dir: dir, opts: o,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go a.build()
	a.wake()
	return a, nil
}

func (a *Accelerated) wake() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// Apply applies to the exact index and wakes the builder.
func (a *Accelerated) Apply(adds []engine.VectorDoc, deletes []uint64, watermark uint64) error {
	if err := a.exact.Apply(adds, deletes, watermark); err != nil {
		return err
	}
	if len(deletes) > 0 {
		a.pendMu.Lock()
		a.pending = append(a.pending, deletes...)
		a.pendMu.Unlock()
	}
	a.wake()
	return nil
}

// Search answers from the graph for the ids it covers and from the exact
// scan for the ids above them; from the exact index alone while there is
// no graph.
func (a *Accelerated) Search(q []float32, k int) ([]engine.VectorHit, error) {
	a.mu.RLock()
	ann, covered := a.ann, a.covered
	a.mu.RUnlock()
	if ann == nil || covered == 0 {
		return a.exact.Search(q, k)
	}
	if k <= 0 {
		return nil, fmt.Errorf("%w: got %d", ErrInvalidK, k)
	}
	// Deleted ids may linger in the graph until the builder catches up:
	// ask for more and keep the live ones.
	g, err := ann.Search(q, 2*k)
	if err != nil {
		return a.exact.Search(q, k)
	}
	tail, err := a.exact.SearchAfter(q, k, covered)
	if err != nil {
		return nil, err
	}
	hits := make([]engine.VectorHit, 0, len(g)+len(tail))
	for _, h := range g {
		if h.ID <= covered && a.exact.Live(h.ID) {
			hits = append(hits, h)
		}
	}
	hits = append(hits, tail...)
	slices.SortFunc(hits, compareHits)
	return hits[:min(k, len(hits))], nil
}

// SearchFilter scans exactly: the filters apply during the scan.
func (a *Accelerated) SearchFilter(q []float32, k int, f engine.VectorFilter) ([]engine.VectorHit, error) {
	return a.exact.SearchFilter(q, k, f)
}

// Watermark is the exact index's.
func (a *Accelerated) Watermark() uint64 { return a.exact.Watermark() }

// Len is the exact index's.
func (a *Accelerated) Len() int { return a.exact.Len() }

// Save saves the exact index; the builder saves the graph.
func (a *Accelerated) Save() error { return a.exact.Save() }

// GraphLen is the number of vectors in the graph, 0 while there is none.
func (a *Accelerated) GraphLen() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.ann == nil {
		return 0
	}
	return a.ann.Len()
}

// Compact compacts the exact index and drops the graph: the builder
// builds it again without the deleted vectors.
func (a *Accelerated) Compact(ctx context.Context) error {
	if err := a.exact.Compact(ctx); err != nil {
		return err
	}
	a.mu.Lock()
	ann := a.ann
	a.ann, a.covered = nil, 0
	a.mu.Unlock()
	if ann != nil {
		// The builder may be inserting: it notices the swap and stops.
		_ = ann.Close()
	}
	if err := os.RemoveAll(a.dir); err != nil {
		return fmt.Errorf("hnsw: compact: %w", err)
	}
	a.wake()
	return nil
}

// Close stops the builder, saves and closes the graph and closes the
// exact index.
func (a *Accelerated) Close() error {
	select {
	case <-a.stop:
		return a.exact.Close() // ErrClosed from the exact index
	default:
	}
	close(a.stop)
	<-a.done
	a.mu.Lock()
	ann := a.ann
	a.ann = nil
	a.mu.Unlock()
	var errs []error
	if ann != nil {
		errs = append(errs, ann.Close())
	}
	a.errMu.Lock()
	errs = append(errs, a.err)
	a.errMu.Unlock()
	errs = append(errs, a.exact.Close())
	return errors.Join(errs...)
}

// build is the builder goroutine.
func (a *Accelerated) build() {
	defer close(a.done)
	for {
		select {
		case <-a.stop:
			return
		case <-a.kick:
		}
		if err := a.catchUp(); err != nil {
			a.errMu.Lock()
			a.err = err
			a.errMu.Unlock()
		}
	}
}

func (a *Accelerated) stopped() bool {
	select {
	case <-a.stop:
		return true
	default:
		return false
	}
}

// catchUp loads or starts the graph if the archive is large enough, then
// inserts the rows above the graph's last id, in batches.
func (a *Accelerated) catchUp() error {
	a.mu.RLock()
	ann := a.ann
	a.mu.RUnlock()
	if ann == nil {
		// Deletions matter only to a graph: one built later reads the
		// live rows.
		a.pendMu.Lock()
		a.pending = nil
		a.pendMu.Unlock()
	}
	if a.opts.GraphAbove < 0 || a.exact.Len() <= a.opts.GraphAbove {
		return nil
	}
	if ann == nil {
		g := a.opts.Graph
		x, err := Open(a.dir, &g)
		if err != nil {
			// Derived data: start afresh.
			if err = os.RemoveAll(a.dir); err == nil {
				x, err = Open(a.dir, &g)
			}
			if err != nil {
				return err
			}
		}
		a.mu.Lock()
		// The graph's watermark is the last id it holds.
		a.ann, a.covered = x, x.Watermark()
		a.mu.Unlock()
		ann = x
	}
	sinceSave := 0
	for !a.stopped() {
		a.pendMu.Lock()
		dels := a.pending
		a.pending = nil
		a.pendMu.Unlock()
		a.mu.RLock()
		covered := a.covered
		a.mu.RUnlock()
		var docs []engine.VectorDoc
		err := a.exact.RangeAfter(covered, func(id uint64, v []float32) bool {
			docs = append(docs, engine.VectorDoc{ID: id, Vector: slices.Clone(v)})
			return len(docs) < DefaultBuildBatch
		})
		if err != nil {
			return err
		}
		if len(docs) == 0 && len(dels) == 0 {
			break
		}
		last := covered
		if len(docs) > 0 {
			last = docs[len(docs)-1].ID
		}
		if err := ann.Apply(docs, dels, last); err != nil {
			if errors.Is(err, ErrClosed) {
				return nil // dropped by Compact meanwhile
			}
			return fmt.Errorf("hnsw: build: %w", err)
		}
		a.mu.Lock()
		if a.ann != ann { // dropped by Compact
			a.mu.Unlock()
			return nil
		}
		a.covered = last
		a.mu.Unlock()
		if sinceSave += len(docs); sinceSave >= a.opts.SaveEvery {
			if err := ann.Save(); err != nil {
				return err
			}
			sinceSave = 0
		}
	}
	if sinceSave > 0 {
		return ann.Save()
	}
	return nil
}

// KeepsVectors is the exact index's, false when it cannot return its
// vectors (engine.VectorReader).
func (a *Accelerated) KeepsVectors() bool {
	r, ok := a.exact.(engine.VectorReader)
	return ok && r.KeepsVectors()
}

// Vector is the exact index's (engine.VectorReader).
func (a *Accelerated) Vector(id uint64) ([]float32, bool, error) {
	if r, ok := a.exact.(engine.VectorReader); ok {
		return r.Vector(id)
	}
	return nil, false, nil
}

// NextVector is the exact index's (engine.VectorReader).
func (a *Accelerated) NextVector(from uint64) (uint64, []float32, bool, error) {
	if r, ok := a.exact.(engine.VectorReader); ok {
		return r.NextVector(from)
	}
	return 0, nil, false, nil
}

var _ engine.RescoredVectorIndex = (*Accelerated)(nil)

// RescoreCandidates is the exact index's, 0 when its scores are final
// (engine.RescoredVectorIndex). The graph's hits are rescored with the
// exact scan's: the engine rescores every candidate a search returns.
func (a *Accelerated) RescoreCandidates(k int) int {
	if r, ok := a.exact.(engine.RescoredVectorIndex); ok {
		return r.RescoreCandidates(k)
	}
	return 0
}

var _ engine.IndexFinisher = (*Accelerated)(nil)

// FinishBuilds is the exact index's (engine.IndexFinisher); the graph
// keeps its own builder.
func (a *Accelerated) FinishBuilds(ctx context.Context, progress func(done, total int64)) error {
	if f, ok := a.exact.(engine.IndexFinisher); ok {
		return f.FinishBuilds(ctx, progress)
	}
	return nil
}

var _ engine.MemoryReleaser = (*Accelerated)(nil)

// ReleaseMemory is the exact index's (engine.MemoryReleaser); the graph,
// on the heap, is kept.
func (a *Accelerated) ReleaseMemory() error {
	if r, ok := a.exact.(engine.MemoryReleaser); ok {
		return r.ReleaseMemory()
	}
	return nil
}
