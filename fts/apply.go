package fts

import (
	"encoding/binary"
	"fmt"
	"time"

	index "github.com/blevesearch/bleve_index_api"

	"github.com/hmo-dev/hmo/engine"
)

// Apply indexes docs, removes the ids in deletes and records watermark, all
// in one bleve batch: after a crash the index holds either all of it or
// none of it, and Watermark says which. A doc whose id is present replaces
// it; an id both in docs and in deletes ends up deleted. Deleting an absent
// id does nothing. Apply returns once the batch is persisted (synced to
// disk), or with Options.AsyncPersist once it is searchable
// (DurableWatermark follows the disk).
//
// Empty Scope and Session are not indexed, so such a doc matches no filter
// on them; likewise a zero Time matches no time filter. Time is indexed in
// whole seconds (see timeKey).
func (x *Index) Apply(docs []engine.TextDoc, deletes []uint64, watermark uint64) (err error) {
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	defer func() {
		if err != nil {
			// Whether the batch is in the index is not known: every
			// document is looked up from now on.
			x.maxKnown = false
		}
	}()
	defer recoverTo("apply", &err)
	if x.closed.Load() {
		return fmt.Errorf("fts: apply: %w", ErrClosed)
	}
	if x.readOnly {
		// bleve's read-only scorch never introduces a batch: Batch would
		// wait forever.
		return fmt.Errorf("fts: apply: %w", ErrReadOnly)
	}
	b := index.NewBatch()
	lens, err := x.lengths()
	if err != nil {
		return err
	}
	var lr lengthReader
	defer lr.close(&err)
	pending := map[uint64]*[nFields]uint32{} // lengths set in this batch; nil: deleted
	maxID := x.maxID
	old := func(id uint64) (*[nFields]uint32, error) {
		if l, ok := pending[id]; ok {
			return l, nil
		}
		if x.maxKnown && id > x.maxID {
			return nil, nil // never indexed
		}
		return lr.docLengths(x, id)
	}
	fq := x.indexFreqs(docs)
	// Deletes come last: a batch that adds and deletes an id deletes it.
	for i := range docs {
		d := &docs[i]
		l, err := old(d.ID)
		if err != nil {
			return err
		}
		lens.sub(l)
		nl := fq[i].lengths()
		lens.add(&nl)
		pending[d.ID] = &nl
		maxID = max(maxID, d.ID)
		doc, err := x.an.newDocument(d, &nl, &fq[i])
		if err != nil {
			return err
		}
		b.Update(doc)
	}
	for _, id := range deletes {
		l, err := old(id)
		if err != nil {
			return err
		}
		lens.sub(l)
		pending[id] = nil
		b.Delete(docID(id))
	}
	b.SetInternal(keyLengths, lens.encode())
	var wm [8]byte
	binary.BigEndian.PutUint64(wm[:], watermark)
	b.SetInternal(keyWatermark, wm[:])
	if x.maxKnown {
		var v [16]byte
		binary.BigEndian.PutUint64(v[:], maxID)
		binary.BigEndian.PutUint64(v[8:], watermark)
		b.SetInternal(keyMaxID, v[:])
	}
	b.SetPersistedCallback(x.persisted(watermark))
	if err := x.s.Batch(b); err != nil {
		return x.wrap("apply", err)
	}
	x.maxID = maxID
	x.applied.Store(watermark)
	return nil
}

// timeKey is the value indexed for t: its Unix time in whole seconds
// (rounded down), carried in the nanoseconds of a time.Time because bleve's
// datetime field stores nanoseconds. Nanoseconds would cost about a third
// of the index's size for no use: recorded event times are not that fine,
// and filters compare whole seconds too.
func timeKey(t time.Time) time.Time {
	const limit = 1 << 62 // seconds; keeps the key inside bleve's date range
	return time.Unix(0, min(max(t.Unix(), -limit), limit))
}

// recoverTo turns a panic inside bleve into an error wrapping ErrCorrupt:
// bleve panics on segment data it cannot decode.
func recoverTo(op string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("fts: %s: %w: panic: %v", op, ErrCorrupt, r)
	}
}
