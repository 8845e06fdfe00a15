package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// queuedText is a tier view's lexical index whose changes can be queued
// (enqueue) and applied later, in order, by the first reader: every
// search, term test, watermark or direct Apply first applies what is
// queued, so a reader sees the index that applying each change at once
// would have built. A recall's access queues the analysis of the records
// it promotes into the views and the deletion of those it demotes: the
// next reader applies those of every access since in one Apply
// (mergeable) rather than one for each record moved. Safe for concurrent
// use.
type queuedText struct {
	ix TextIndex

	applyMu sync.Mutex // held while queued changes are applied, in order

	mu      sync.Mutex // guards the fields below
	ops     []textOp   // queued changes (docs and dels only), oldest first
	changes int        // documents and deletions in ops
	err     error      // the failure of a queued change, for the next reader
}

var _ TextIndex = (*queuedText)(nil)

func newQueuedText(ix TextIndex) *queuedText { return &queuedText{ix: ix} }

// queuedBound is how many queued documents and deletions make enqueue
// apply them itself: a process whose questions never read the tiers'
// indexes (answersNowhere) keeps no unbounded queue.
const queuedBound = 4096

// enqueue queues a change (none: nothing to queue), or applies the
// queue with it when it holds queuedBound changes.
func (q *queuedText) enqueue(docs []TextDoc, deletes []uint64) error {
	if len(docs) == 0 && len(deletes) == 0 {
		return nil
	}
	q.mu.Lock()
	q.ops = append(q.ops, textOp{docs: docs, dels: deletes})
	q.changes += len(docs) + len(deletes)
	full := q.changes >= queuedBound
	q.mu.Unlock()
	if full {
		_, err := q.settle()
		return err
	}
	return nil
}

// queued reports whether changes wait to be applied.
func (q *queuedText) queued() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.ops) > 0
}

// settle applies the queued changes in order and returns the index
// holding them, or the first failure of a queued change, which is
// reported once.
func (q *queuedText) settle() (TextIndex, error) {
	q.applyMu.Lock()
	defer q.applyMu.Unlock()
	q.mu.Lock()
	ops, err := q.ops, q.err
	q.ops, q.err, q.changes = nil, nil, 0
	q.mu.Unlock()
	for start := 0; start < len(ops) && err == nil; {
		var docs []TextDoc
		var dels []uint64
		end := mergeable(ops[start:]) + start
		for _, op := range ops[start:end] {
			docs, dels = append(docs, op.docs...), append(dels, op.dels...)
		}
		if err = q.ix.Apply(docs, dels, 0); err != nil {
			err = fmt.Errorf("hmo: tier text index (%d queued changes left out): %w", len(ops)-end, err)
		}
		start = end
	}
	if err != nil {
		return nil, err
	}
	return q.ix, nil
}

// mergeable returns how many of the first ops one Apply of their
// documents and deletions together changes the index as applying each
// in turn would (at least one): Apply deletes before it adds, so a
// record added by one and deleted by a later one ends the run. A record
// deleted and then added, or added twice, is as in turn (the last
// document replaces the others). An index ranks the same documents alike
// whatever the order they were added in.
func mergeable(ops []textOp) int {
	added := map[uint64]bool{}
	for i, op := range ops {
		if i > 0 && slices.ContainsFunc(op.dels, func(id uint64) bool { return added[id] }) {
			return i
		}
		for _, d := range op.docs {
			added[d.ID] = true
		}
	}
	return len(ops)
}

func (q *queuedText) Apply(docs []TextDoc, deletes []uint64, watermark uint64) error {
	ix, err := q.settle()
	if err != nil {
		return err
	}
	return ix.Apply(docs, deletes, watermark)
}

func (q *queuedText) Search(ctx context.Context, query string, k int, f TextFilter) ([]TextHit, error) {
	ix, err := q.settle()
	if err != nil {
		return nil, err
	}
	return ix.Search(ctx, query, k, f)
}

func (q *queuedText) Watermark() (uint64, error) {
	ix, err := q.settle()
	if err != nil {
		return 0, err
	}
	return ix.Watermark()
}

func (q *queuedText) Close() error { return q.ix.Close() }
