package engine

import (
	"cmp"
	"context"
	"errors"
	"runtime"
	"slices"
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
	// queued counts the documents and deletions in pending since its last
	// compaction, which left compacted of them.
	queued, compacted int
}

// textOp is one Apply call, or documents built when the index is filled
// (load, applyLater, for the records ids).
type textOp struct {
	docs []TextDoc
	dels []uint64
	wm   uint64
	load func() ([]TextDoc, error)
	ids  []uint64
}

// compactAbove is how many pending documents and deletions beyond twice
// what the last compaction left trigger the next: a process that writes
// and never searches the tiers (an import) keeps what the index will
// hold, not every change.
const compactAbove = 4096

var _ TextIndex = (*lazyText)(nil)

func newLazyText(ix TextIndex) *lazyText { return &lazyText{ix: ix} }

func (l *lazyText) Apply(docs []TextDoc, deletes []uint64, watermark uint64) error {
	l.mu.Lock()
	if !l.filled {
		l.pending = append(l.pending, textOp{docs: docs, dels: deletes, wm: watermark})
		if l.queued += len(docs) + len(deletes); l.queued > 2*l.compacted+compactAbove {
			l.compact()
		}
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
func (l *lazyText) applyLater(ids []uint64, load func() ([]TextDoc, error)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = append(l.pending, textOp{load: load, ids: ids})
}

// compact replaces the changes after the last applyLater with one that
// leaves the index as they would: the deletion of the records that the
// changes before may have added and that the later ones leave deleted,
// then each record's last document that they leave added (Apply deletes
// before it adds). The index is empty until the fill, so a record that
// only the later changes add needs no deletion. l.mu is held.
func (l *lazyText) compact() {
	kept := 0
	for i, op := range l.pending {
		if op.load != nil {
			kept = i + 1
		}
	}
	before := map[uint64]bool{}
	for _, op := range l.pending[:kept] {
		for _, d := range op.docs {
			before[d.ID] = true
		}
		for _, id := range op.ids {
			before[id] = true
		}
	}
	type state struct {
		doc   *TextDoc // nil: deleted
		order int      // place of the last addition
	}
	last := map[uint64]state{}
	var wm uint64
	n := 0
	for i := kept; i < len(l.pending); i++ {
		op := &l.pending[i]
		for _, id := range op.dels {
			last[id] = state{}
		}
		for j := range op.docs {
			last[op.docs[j].ID] = state{doc: &op.docs[j], order: n}
			n++
		}
		wm = max(wm, op.wm)
	}
	out := textOp{wm: wm}
	for id, st := range last {
		switch {
		case st.doc != nil:
			out.docs = append(out.docs, *st.doc)
		case before[id]:
			out.dels = append(out.dels, id)
		}
	}
	slices.SortFunc(out.docs, func(a, b TextDoc) int { return cmp.Compare(last[a.ID].order, last[b.ID].order) })
	slices.Sort(out.dels)
	l.pending = append(l.pending[:kept:kept], out)
	l.queued = len(out.docs) + len(out.dels)
	l.compacted = l.queued
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
