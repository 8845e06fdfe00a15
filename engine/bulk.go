package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// RememberBatches stores batches in order, each in one bbolt transaction
// exactly as RememberBatch stores it (same checks, dedup, idempotency
// keys, tier admission and index updates), and returns the number of
// batches committed. It is the bulk path (hmo import): while batch i+1 is
// read, committed and placed in the tiers, a goroutine owned by the call
// brings the indexes up to date with batch i, so the transaction and the
// index update run on two cores instead of one. Every update is done
// when it returns. Other writers wait until it returns. The tier entries
// and headers (in memory, current for Get and Recall all along) are
// written to bbolt by the tier flusher once bulkFlushRecords records are
// dirty, and when it returns: a record placed in the tiers and evicted a
// few batches later has its entry written and deleted no more, and
// neither the admission nor the next batch's commit waits for a tier
// write.
//
// done, when not nil, is called from the calling goroutine with each
// batch's position and outcome once the batch is committed; it must not
// call the engine (the call holds the write lock).
//
// The vector index's derived structures (its partition, from 75K
// vectors) are built in the background and stop at Close. A program
// that writes much and exits calls FinishBuilds before Close, as hmo
// import does; else a store opened next only by short-lived processes
// never finishes them.
//
// The first error stops the call: an invalid input rejects its batch
// (nothing of it is stored) and the batches after it are not read. The
// next batch is read while one commits (its inputs are prepared
// meanwhile), so a batch whose commit fails (I/O, ctx, the embedder)
// may have had one more batch read, which is not stored. As
// with RememberBatch, a committed batch whose tier or index update failed
// stays committed (the error says so) and is indexed at the next write or
// open, from the change log.
func (e *Engine) RememberBatches(ctx context.Context, batches iter.Seq[Batch], done func(i int, out []Stored)) (n int, err error) {
	if err := e.checkOpen(); err != nil {
		return 0, err
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if err := e.checkOpen(); err != nil {
		return 0, err
	}
	// after carries the result of the previous batch's index update and
	// checkpoint (indexAfter), which run while the next batch commits
	// and is placed in the tiers. Neither the transaction nor the
	// admission touches the indexes or sinceCheckpoint, and the update
	// does not touch the tiers; both goroutines run under this call's
	// wmu.
	var after chan error
	wait := func() error {
		if after == nil {
			return nil
		}
		err := <-after
		after = nil
		return err
	}
	defer func() {
		_ = wait() // the goroutine never outlives the call
		e.fresh.Store(nil)
		// What the batches' admissions left unwritten, whatever the
		// outcome: the tiers in memory are those of every admission run.
		if ferr := e.flushAccesses(); ferr != nil {
			err = errors.Join(err, fmt.Errorf("hmo: records stored, tier update: %w", ferr))
		}
	}()
	// The next batch is read, and its inputs prepared (what depends on
	// them alone: identity keys, importance, entities), while this one
	// commits; one prepare runs at a time.
	next, stop := iter.Pull(batches)
	defer stop()
	var ahead chan []prepared // the next batch's prepare
	defer func() {
		if ahead != nil {
			<-ahead // the goroutine never outlives the call
		}
	}()
	b, ok := next()
	var pre []prepared
	for ok {
		if err := e.checkBatch(&b); err != nil {
			return n, errors.Join(wait(), fmt.Errorf("batch %d: %w", n, err))
		}
		if pre == nil {
			pre = e.prepare(b.Inputs)
		}
		// An iterator may reuse its batch's arrays for the next one, which
		// is read before this one commits.
		b.Inputs = cloneInputs(b.Inputs)
		nb, nok := next()
		if nok && len(nb.Inputs) > 0 {
			ahead = make(chan []prepared, 1)
			go func(b Batch, ch chan<- []prepared) {
				if e.checkBatch(&b) != nil {
					ch <- nil // refused when its turn comes
					return
				}
				ch <- e.prepare(b.Inputs)
			}(nb, ahead)
		}
		c, err := e.commitOne(ctx, &b, pre)
		var aerr error
		if err == nil && len(c.ids) > 0 {
			// The batch is placed in the tiers here, beside the previous
			// batch's index update, and before its own: a concurrent
			// Recall finds a record in the archive indexes only once it
			// is in the tiers (afterCommit). The admission reads this
			// batch's records, the update the previous batch's.
			e.fresh.Store(c.fresh.beside(e.fresh.Load()))
			aerr = e.admit(c.ids, true)
		}
		perr := wait()
		if err != nil {
			return n, errors.Join(perr, fmt.Errorf("batch %d: %w", n, err))
		}
		e.committed(c.ids)
		if done != nil {
			done(n, c.out)
		}
		n++
		// Set only while no update runs: the update reads it, the next
		// commit only reads it too.
		e.fresh.Store(&c.fresh)
		if aerr != nil {
			// As afterCommit: the indexes are brought up to date with
			// this batch at the next write or open.
			return n, errors.Join(perr, fmt.Errorf("hmo: records stored, tier update: %w", aerr))
		}
		if perr != nil {
			// The previous batch's update failed: this batch's is tried
			// here, and the call stops.
			return n, errors.Join(perr, e.indexAfter(c))
		}
		if len(c.ids) > 0 {
			after = make(chan error, 1)
			go func(c commit, ch chan<- error) { ch <- e.indexAfter(c) }(c, after)
		}
		b, ok, pre = nb, nok, nil
		if ahead != nil {
			pre, ahead = <-ahead, nil
		}
	}
	return n, wait()
}

// cloneInputs is a copy of ins that shares no array with it.
func cloneInputs(ins []Input) []Input {
	out := slices.Clone(ins)
	for i := range out {
		out[i].Sources = slices.Clone(out[i].Sources)
	}
	return out
}

// commitOne stores b, which is checked, in one transaction; pre, when
// not nil, is b prepared. The caller holds wmu.
func (e *Engine) commitOne(ctx context.Context, b *Batch, pre []prepared) (commit, error) {
	if len(b.Inputs) == 0 {
		return commit{}, nil
	}
	return e.commitBatch(ctx, b, pre)
}

// checkBatch validates every input of b and its key.
func (e *Engine) checkBatch(b *Batch) error {
	for i := range b.Inputs {
		if err := b.Inputs[i].validate(e.opts); err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
	}
	return validateKey(b.Key)
}

// committed counts the records a commit created and wakes the enricher.
func (e *Engine) committed(ids []uint64) {
	if len(ids) == 0 {
		return
	}
	e.records.Add(int64(len(ids)))
	if e.enr != nil {
		e.enr.signal()
	}
}

// afterCommit places a commit's records in the tiers (their entries
// written), brings the indexes up to date with the change log as it
// stood after the commit, and checkpoints when due: a write's work after
// its transaction (RememberBatch; RememberBatches splits it). The caller
// holds wmu.
func (e *Engine) afterCommit(c commit) error {
	// Tiers first: a concurrent Recall can then find a new record in the
	// archive indexes only once it is placed in the tiers. The update
	// stops at c.seq: a commit running meanwhile (RememberBatches) has
	// records not placed yet.
	if err := e.admit(c.ids, false); err != nil {
		return fmt.Errorf("hmo: records stored, tier update: %w", err)
	}
	return e.indexAfter(c)
}

// indexAfter is afterCommit's work once the commit's records are placed
// in the tiers: the indexes, brought up to date with the change log as it
// stood after the commit, and the checkpoint when due. The caller holds
// wmu.
func (e *Engine) indexAfter(c commit) error {
	if err := e.syncUpTo(c.seq); err != nil {
		return fmt.Errorf("hmo: records stored, index update deferred to next open: %w", err)
	}
	return e.maybeCheckpoint()
}

// freshRecords are the records a write transaction created, as stored,
// by id. The work after its commit (tier admission, index documents)
// reads them from here instead of decoding them again from bbolt: only
// fields that no later write in the batch changes are read this way
// (text, role, scope, session, time, links, initial header), and a
// record a duplicate input merged into is left out.
type freshRecords map[uint64]*Record

// freshWrite is what a write transaction created, as stored: the records
// (freshRecords) and their vectors, which nothing changes before the
// work after its commit is done. The vectors are the embedder's own
// results, read and never written by the engine (an Embedder safe for
// concurrent use returns new memory for every call), as the segment
// tree, the themes and the time tree already read them.
type freshWrite struct {
	recs freshRecords
	vecs map[uint64][]float32
	// older is the write whose index update still runs beside this
	// one's tier admission (RememberBatches); nil otherwise. Set before
	// the write is published, never changed.
	older *freshWrite
}

// beside returns f with running, the write whose index update runs
// meanwhile, as its older one (without running's own older one).
func (f *freshWrite) beside(running *freshWrite) *freshWrite {
	g := &freshWrite{recs: f.recs, vecs: f.vecs}
	if running != nil {
		g.older = &freshWrite{recs: running.recs, vecs: running.vecs}
	}
	return g
}

// record returns record id: from the records of the write whose
// post-commit work is running (e.fresh), else from tx.
func (e *Engine) record(tx *bolt.Tx, id uint64) (Record, error) {
	return e.freshRecord(tx.Bucket(bucketRecords), id)
}

// preadRecords returns record for the read transaction tx, reading the
// records bucket by pread when it can (boltDB.preadBucket).
func (e *Engine) preadRecords(tx *bolt.Tx) func(*bolt.Tx, uint64) (Record, error) {
	recs := e.db.preadBucket(tx, bucketRecords)
	return func(_ *bolt.Tx, id uint64) (Record, error) { return e.freshRecord(recs, id) }
}

// freshRecord is record reading the records bucket through recs.
func (e *Engine) freshRecord(recs kvGetter, id uint64) (Record, error) {
	for f := e.fresh.Load(); f != nil; f = f.older {
		if r := f.recs[id]; r != nil {
			return *r, nil
		}
	}
	return getRecordFrom(recs, id)
}

// freshVector is the vector of id: from the write whose post-commit work
// is running (e.fresh), else from vs.
func (e *Engine) freshVector(vs storedVectors, id uint64) ([]float32, error) {
	for f := e.fresh.Load(); f != nil; f = f.older {
		if v, ok := f.vecs[id]; ok {
			return v, nil
		}
	}
	return vs.get(id)
}
