package fts

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/hmo-dev/hmo/engine"
)

// Times bleve can index and query: nanoseconds since 1970 in an int64,
// narrowed by bleve's date range queries to whole days.
var (
	minTime = query.MinRFC3339CompatibleTime // 1677-12-01
	maxTime = query.MaxRFC3339CompatibleTime // 2262-04-11
)

// Apply indexes docs, removes the ids in deletes and records watermark, all
// in one bleve batch: after a crash the index holds either all of it or
// none of it, and Watermark says which. A doc whose id is present replaces
// it; an id both in docs and in deletes ends up deleted. Deleting an absent
// id does nothing. Apply returns once the batch is persisted (synced to
// disk).
//
// Empty Scope and Session are not indexed, so such a doc matches no filter
// on them; likewise a zero Time matches no time filter. Times outside
// 1677-12-01 to 2262-04-11 are clamped to that range, in docs and filters.
func (x *Index) Apply(docs []engine.TextDoc, deletes []uint64, watermark uint64) (err error) {
	defer recoverTo("apply", &err)
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	if x.closed.Load() {
		return fmt.Errorf("fts: apply: %w", ErrClosed)
	}
	b := x.bi.NewBatch()
	for i := range docs {
		if err := b.Index(docID(docs[i].ID), fields(&docs[i])); err != nil {
			return x.wrap("apply", err)
		}
	}
	for _, id := range deletes {
		b.Delete(docID(id))
	}
	var wm [8]byte
	binary.BigEndian.PutUint64(wm[:], watermark)
	b.SetInternal(keyWatermark, wm[:])
	if err := x.bi.Batch(b); err != nil {
		return x.wrap("apply", err)
	}
	return nil
}

// fields is the bleve document of d.
func fields(d *engine.TextDoc) map[string]any {
	f := map[string]any{fieldText: d.Text}
	if d.Scope != "" {
		f[fieldScope] = d.Scope
	}
	if d.Session != "" {
		f[fieldSession] = d.Session
	}
	if !d.Time.IsZero() {
		f[fieldTime] = clampTime(d.Time)
	}
	return f
}

// clampTime moves t into the range bleve can index.
func clampTime(t time.Time) time.Time {
	switch {
	case t.Before(minTime):
		return minTime
	case t.After(maxTime):
		return maxTime
	}
	return t
}

// recoverTo turns a panic inside bleve into an error wrapping ErrCorrupt:
// bleve panics on segment data it cannot decode.
func recoverTo(op string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("fts: %s: %w: panic: %v", op, ErrCorrupt, r)
	}
}
