package engine

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// bucketHistory holds the versions that Update superseded: id -> record,
// with SupersededBy set. They are out of the indexes, the time index, the
// session chains and the tiers: readable by id, never recalled or listed.
var bucketHistory = []byte("history")

// maxChain bounds how far a supersede chain is followed, so a corrupt
// store with a cycle cannot loop forever.
const maxChain = 1 << 16

// Update supersedes record id with a new version holding text. The new
// version keeps the old one's scope, session, role and sources, is timed
// now (engine clock) and records Supersedes = id; the old version moves to
// history (readable with Get and History, no longer recalled or listed).
// Updating a history version fails with ErrSuperseded. It returns the new
// version's id.
func (e *Engine) Update(ctx context.Context, id uint64, text string) (uint64, error) {
	if err := e.checkOpen(); err != nil {
		return 0, err
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if err := e.checkOpen(); err != nil {
		return 0, err
	}
	var newID uint64
	var touched []uint64
	old, err := e.Get(id)
	if err == nil && old.SupersededBy != 0 {
		err = fmt.Errorf("%w: record %d was replaced by %d", ErrSuperseded, id, old.SupersededBy)
	}
	if err != nil {
		return 0, err
	}
	in := Input{Scope: old.Scope, Session: old.Session, Role: old.Role, Text: text, Sources: old.Sources}
	if err := in.validate(e.opts); err != nil {
		return 0, err
	}
	e.swapCorpus(old.Text, text)
	err = e.db.Update(func(tx *bolt.Tx) error {
		var err error
		batches := batchKeysOf(tx, id) // a replayed batch answers with the new version
		if _, touched, err = e.forgetTx(ctx, tx, []uint64{id}); err != nil {
			return err
		}
		if newID, err = e.putVersion(ctx, tx, &in, id); err != nil {
			return err
		}
		if err := moveBatchKeys(tx, batches, id, newID); err != nil {
			return err
		}
		old.SupersededBy = newID
		if err := putHistory(tx, &old, e.opts.CompressAbove); err != nil {
			return err
		}
		return e.saveCorpus(tx)
	})
	e.applyEntities(err)
	if err != nil {
		e.swapCorpus(text, old.Text)
		return 0, err
	}
	e.null.invalidate()
	e.docCache.drop(id)
	e.docCache.drop(touched...)
	if err := e.evict([]uint64{id}, touched, []string{old.Text}); err != nil {
		return newID, fmt.Errorf("hmo: record updated, tier update: %w", err)
	}
	// A tier walk may have cached a view's copy before the eviction.
	e.docCache.drop(id)
	e.docCache.drop(touched...)
	if err := e.admit([]uint64{newID}, false); err != nil {
		return newID, fmt.Errorf("hmo: record updated, tier update: %w", err)
	}
	if err := e.syncIndexes(); err != nil {
		return newID, fmt.Errorf("hmo: record updated, index update deferred to next open: %w", err)
	}
	return newID, e.maybeCheckpoint()
}

// History returns the older versions of record id, newest first: the
// records it superseded, and theirs, and so on.
func (e *Engine) History(id uint64) ([]Record, error) {
	if err := e.checkOpen(); err != nil {
		return nil, err
	}
	var out []Record
	err := e.db.View(func(tx *bolt.Tx) error {
		r, err := getAnyRecord(tx, id)
		if err != nil {
			return err
		}
		for prev, n := r.Supersedes, 0; prev != 0 && n < maxChain; n++ {
			h, err := getHistory(tx, prev)
			if err != nil {
				return err
			}
			out = append(out, h)
			prev = h.Supersedes
		}
		return nil
	})
	return out, err
}

// putVersion stores in as the new version of old and returns its id.
func (e *Engine) putVersion(ctx context.Context, tx *bolt.Tx, in *Input, old uint64) (uint64, error) {
	_, ids, _, err := e.putInputs(ctx, tx, []Input{*in}, nil, false, nil)
	if err != nil {
		return 0, err
	}
	r, err := getRecord(tx, ids[0])
	if err != nil {
		return 0, err
	}
	r.Supersedes = old
	return r.ID, putRecord(tx, &r, e.opts.CompressAbove)
}

// swapCorpus replaces one text's word counts with another's in the
// embedder's corpus statistics. The caller holds wmu.
func (e *Engine) swapCorpus(out, in string) {
	if e.corpus != nil {
		e.corpus.Forget([]string{out})
		e.corpus.Observe([]string{in})
	}
}

// getAnyRecord returns a current record or a history version.
func getAnyRecord(tx *bolt.Tx, id uint64) (Record, error) {
	r, err := getRecord(tx, id)
	if err == nil {
		return r, nil
	}
	if h, herr := getHistory(tx, id); herr == nil {
		return h, nil
	}
	return Record{}, err
}

func putHistory(tx *bolt.Tx, r *Record, compressAbove int) error {
	r.Prev = 0 // out of its session chain
	b, err := encodeRecord(r, compressAbove)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketHistory).Put(u64key(r.ID), b)
}

func getHistory(tx *bolt.Tx, id uint64) (Record, error) {
	b := tx.Bucket(bucketHistory).Get(u64key(id))
	if b == nil {
		return Record{}, fmt.Errorf("%w: record %d", ErrNotFound, id)
	}
	return decodeRecord(b)
}

// resolveChains maps ids (current records or history versions) to the
// current heads of their chains, without duplicates, and lists the history
// versions of those chains. An unknown id is ErrNotFound.
func resolveChains(tx *bolt.Tx, ids []uint64) (heads, history []uint64, err error) {
	seen := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		head, err := chainHead(tx, id)
		if err != nil {
			return nil, nil, err
		}
		if seen[head.ID] {
			continue
		}
		seen[head.ID] = true
		heads = append(heads, head.ID)
		for prev, n := head.Supersedes, 0; prev != 0 && n < maxChain; n++ {
			h, err := getHistory(tx, prev)
			if err != nil {
				break // already gone: nothing more to delete
			}
			history = append(history, prev)
			prev = h.Supersedes
		}
	}
	return heads, history, nil
}

// chainHead follows SupersededBy from id to the current version.
func chainHead(tx *bolt.Tx, id uint64) (Record, error) {
	for n := 0; n < maxChain; n++ {
		if r, err := getRecord(tx, id); err == nil {
			return r, nil
		}
		h, err := getHistory(tx, id)
		if err != nil {
			return Record{}, err
		}
		id = h.SupersededBy
	}
	return Record{}, fmt.Errorf("%w: supersede chain of record %d", ErrCorrupt, id)
}

func deleteHistory(tx *bolt.Tx, ids []uint64) error {
	b := tx.Bucket(bucketHistory)
	for _, id := range ids {
		if err := b.Delete(u64key(id)); err != nil {
			return err
		}
	}
	return nil
}
