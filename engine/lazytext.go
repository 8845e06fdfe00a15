package engine

import (
	"context"
	"errors"
	"runtime"
	"sync"
)

// lazyText is a tier view's lexical index that is filled at its first
// search. Tier 2's index holds every record of Tiers 1 and 2 (view.also):
// analysing them is most of a tiered open's work, and a query that Tier 1
// answers never reads it. Until then the changes are kept in order and
// replayed at the first search, so the index is the one an eager fill
// would have built. Safe for concurrent use.
type lazyText struct {
	ix TextIndex

	mu      sync.Mutex // guards the fields below
	filled  bool
	pending []textOp // changes not yet applied, in order
}

// textOp is one Apply call, or documents built when the index is filled
// (load, applyLater).
type textOp struct {
	docs []TextDoc
	dels []uint64
	wm   uint64
	load func() ([]TextDoc, error)
}

var _ TextIndex = (*lazyText)(nil)

func newLazyText(ix TextIndex) *lazyText { return &lazyText{ix: ix} }

func (l *lazyText) Apply(docs []TextDoc, deletes []uint64, watermark uint64) error {
	l.mu.Lock()
	if !l.filled {
		l.pending = append(l.pending, textOp{docs: docs, dels: deletes, wm: watermark})
		l.mu.Unlock()
		return nil
	}
	l.mu.Unlock()
	return l.ix.Apply(docs, deletes, watermark)
}

// applyLater adds the documents load returns, in the place of this call
// among the changes, when the index is filled: load runs then, and only
// if it is. The documents it returns must be those that building them
// now would give, or be replaced or deleted by a later change. Before
// the fill only.
func (l *lazyText) applyLater(load func() ([]TextDoc, error)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = append(l.pending, textOp{load: load})
}

// isFilled reports whether the index was filled.
func (l *lazyText) isFilled() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.filled
}

func (l *lazyText) Search(ctx context.Context, query string, k int, f TextFilter) ([]TextHit, error) {
	if err := l.fill(); err != nil {
		return nil, err
	}
	return l.ix.Search(ctx, query, k, f)
}

func (l *lazyText) Watermark() (uint64, error) {
	if err := l.fill(); err != nil {
		return 0, err
	}
	return l.ix.Watermark()
}

func (l *lazyText) Close() error { return l.ix.Close() }

// fill replays the pending changes. Consecutive additions are applied as
// one batch, in parallel (see applyParallel), keeping each document's last
// version: applying a document replaces an earlier one.
func (l *lazyText) fill() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.filled {
		return nil
	}
	var batch []TextDoc
	flush := func(wm uint64) error {
		if len(batch) == 0 {
			return nil
		}
		err := applyParallel(l.ix, lastVersions(batch), wm)
		batch = nil
		return err
	}
	var wm uint64
	for _, op := range l.pending {
		if op.load != nil {
			docs, err := op.load()
			if err != nil {
				return err
			}
			batch = append(batch, docs...)
			continue
		}
		if len(op.dels) > 0 {
			if err := flush(wm); err != nil {
				return err
			}
			if err := l.ix.Apply(op.docs, op.dels, op.wm); err != nil {
				return err
			}
		} else {
			batch = append(batch, op.docs...)
		}
		wm = op.wm
	}
	if err := flush(wm); err != nil {
		return err
	}
	l.pending, l.filled = nil, true
	return nil
}

// lastVersions keeps the last document of each id, in order of their
// last appearance.
func lastVersions(docs []TextDoc) []TextDoc {
	last := make(map[uint64]int, len(docs))
	for i, d := range docs {
		last[d.ID] = i
	}
	if len(last) == len(docs) {
		return docs
	}
	out := make([]TextDoc, 0, len(last))
	for i, d := range docs {
		if last[d.ID] == i {
			out = append(out, d)
		}
	}
	return out
}

// parallelViewDocs is the batch size from which a view's text index is
// filled by several goroutines.
const parallelViewDocs = 256

// applyParallel adds distinct documents to ix, analysing them on every
// core when there are many (a view filled at once). Text indexes are
// safe for concurrent use.
func applyParallel(ix TextIndex, docs []TextDoc, wm uint64) error {
	if len(docs) < parallelViewDocs {
		return ix.Apply(docs, nil, wm)
	}
	parts := runtime.GOMAXPROCS(0)
	errs := make(chan error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		chunk := docs[p*len(docs)/parts : (p+1)*len(docs)/parts]
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- ix.Apply(chunk, nil, wm)
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}
