package engine

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Forget deletes records for good: text, summary, vector and index
// entries. Records that were indexed with a forgotten record as context
// are re-indexed without it. Forgetting any version of an updated record
// deletes its whole supersede chain (see Update). Unknown ids fail the
// whole call with ErrNotFound and change nothing.
func (e *Engine) Forget(ctx context.Context, ids ...uint64) error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if err := e.checkOpen(); err != nil {
		return err
	}
	var texts []string
	var touched, heads []uint64
	err := e.db.Update(func(tx *bolt.Tx) error {
		var history []uint64
		var err error
		if heads, history, err = resolveChains(tx, ids); err != nil {
			return err
		}
		if texts, touched, err = e.forgetTx(ctx, tx, heads); err != nil {
			return err
		}
		if err := deleteHistory(tx, history); err != nil {
			return err
		}
		if err := addCount(tx, -len(heads)); err != nil {
			return err
		}
		if e.corpus != nil {
			e.corpus.Forget(texts)
			if err := e.saveCorpus(tx); err != nil {
				e.corpus.Observe(texts)
				return err
			}
		}
		return nil
	})
	e.applyEntities(err)
	if err != nil {
		return err
	}
	e.null.invalidate()
	e.records.Add(-int64(len(heads)))
	e.docCache.drop(heads...)
	e.docCache.drop(touched...)
	if err := e.syncIndexes(); err != nil {
		return fmt.Errorf("hmo: records deleted, index update deferred to next open: %w", err)
	}
	if err := e.evict(heads, touched, texts); err != nil {
		return err
	}
	// A tier walk may have cached a view's copy before the eviction.
	e.docCache.drop(heads...)
	e.docCache.drop(touched...)
	return e.maybeCheckpoint()
}

// forgetTx deletes ids and returns their texts and the records re-indexed
// because their context changed.
func (e *Engine) forgetTx(ctx context.Context, tx *bolt.Tx, ids []uint64) ([]string, []uint64, error) {
	texts := make([]string, 0, len(ids))
	var touched []uint64
	for _, id := range ids {
		r, err := getRecord(tx, id)
		if err != nil {
			return nil, nil, err
		}
		if err := e.treeRemove(tx, &r); err != nil {
			return nil, nil, err
		}
		next, err := e.unlink(tx, &r)
		if err != nil {
			return nil, nil, err
		}
		touched = append(touched, e.successors(tx, next)...)
		texts = append(texts, r.Text)
	}
	if err := logChanges(tx, opDel, ids); err != nil {
		return nil, nil, err
	}
	if err := dropKeys(tx, ids); err != nil {
		return nil, nil, err
	}
	return texts, touched, e.reembed(ctx, tx, touched)
}

// unlink removes r and its vector, and splices it out of its session chain.
// It returns the record that followed r in its session, or 0.
func (e *Engine) unlink(tx *bolt.Tx, r *Record) (uint64, error) {
	key := u64key(r.ID)
	nb, sb := tx.Bucket(bucketNext), tx.Bucket(bucketSessions)
	next := keyU64(nb.Get(key))
	for _, del := range []func() error{
		func() error { return e.themesRemove(tx, r) }, // reads the scope's vectors
		func() error { return tx.Bucket(bucketRecords).Delete(key) },
		func() error { return tx.Bucket(bucketVectors).Delete(key) },
		func() error { return tx.Bucket(bucketByTime).Delete(timeKey(r.Time, r.ID)) },
		func() error { return nb.Delete(key) },
		func() error { return tx.Bucket(bucketActive).Delete(key) },
		func() error { return tx.Bucket(bucketEnrich).Delete(key) },
		func() error { return unstage(tx, r.ID) },
		func() error { return e.deleteEntities(tx, r.ID) },
	} {
		if err := del(); err != nil {
			return 0, err
		}
	}
	if r.Prev != 0 {
		if err := spliceNext(nb, r.Prev, next); err != nil {
			return 0, err
		}
	}
	if next != 0 {
		return next, relinkPrev(tx, next, r.Prev, e.opts.CompressAbove)
	}
	sk := sessionKey(r.Scope, r.Session)
	if r.Prev == 0 {
		return 0, sb.Delete(sk)
	}
	return 0, putU64(sb, sk, r.Prev)
}

func spliceNext(nb *bolt.Bucket, prev, next uint64) error {
	if next == 0 {
		return nb.Delete(u64key(prev))
	}
	return putU64(nb, u64key(prev), next)
}

func relinkPrev(tx *bolt.Tx, id, prev uint64, compressAbove int) error {
	r, err := getRecord(tx, id)
	if err != nil {
		return err
	}
	r.Prev = prev
	return putRecord(tx, &r, compressAbove)
}

// successors lists id and the records after it whose indexed context can
// reach back to a forgotten record: the next contextTurns turns, and the
// derived records between them (which indexText steps over).
func (e *Engine) successors(tx *bolt.Tx, id uint64) []uint64 {
	var out []uint64
	nb := tx.Bucket(bucketNext)
	for turns, hops := 0, 0; id != 0 && turns < e.opts.contextTurns() && hops < maxContextHops; hops++ {
		out = append(out, id)
		if r, err := getRecord(tx, id); err != nil || !e.opts.standalone(&r) {
			turns++
		}
		id = keyU64(nb.Get(u64key(id)))
	}
	return out
}

// reembed recomputes the vectors of records whose context changed and logs
// them for re-indexing. Records forgotten in the same call are skipped.
func (e *Engine) reembed(ctx context.Context, tx *bolt.Tx, ids []uint64) error {
	var live []uint64
	var texts []string
	for _, id := range ids {
		r, err := getRecord(tx, id)
		if err != nil {
			continue
		}
		live = append(live, id)
		texts = append(texts, e.indexText(tx, &r))
		if err := unstage(tx, id); err != nil {
			return err
		}
	}
	if len(live) == 0 {
		return nil
	}
	vecs, err := e.opts.Embedder.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("hmo: embed: %w", err)
	}
	for i, id := range live {
		old, err := e.storedVectors(tx).get(id)
		if err == nil && len(vecs[i]) == e.dims {
			if err := e.treeMove(tx, id, old, vecs[i]); err != nil {
				return err
			}
		}
	}
	if err := e.putVectors(tx, live, vecs); err != nil {
		return err
	}
	if err := e.themesMove(tx, live, vecs); err != nil {
		return err
	}
	return logChanges(tx, opAdd, live)
}
