package engine

import (
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/hymem/event"
)

// HyMem's event units (package hymem/event) are the level-1 segments of
// the segment tree, kept in bucketEvents with their Level-1 summaries:
// "u"+segment is a unit (scope, Level-2 turns, summary) and "p"+record
// the unit a record belongs to. A unit is rewritten in the transaction
// that changes its segment (every segment-tree change goes through
// treeInsert, treeRemove or treeMove, which note the level-1 segments they
// touch), so no summary outlives a turn it was drawn from. metaEvents names
// the version and the tree's layout the bucket was built with; a store
// without it or with another gets its units rebuilt from the tree on Open.
// The units are also xMemory's episodes.
var (
	bucketEvents = []byte("hymem")
	metaEvents   = []byte("hymem_version")
)

func (e *Engine) eventsVersion() string {
	return fmt.Sprintf("hymem/1 runes=%d %s", event.DefaultSummaryRunes, e.segTreeLayout())
}

func unitKey(seg uint64) []byte { return append([]byte("u"), u64key(seg)...) }
func turnKey(id uint64) []byte  { return append([]byte("p"), u64key(id)...) }
func (e *Engine) noteSegment(id uint64) {
	if e.unitPending != nil {
		e.unitPending[id] = true
	}
}

// flushEvents rewrites the units of the segments the tree changed in tx
// since the last flush. leaves, when not nil, are leaves as tx holds
// them (treeInsert's): their vectors and texts are not read again.
func (e *Engine) flushEvents(tx *bolt.Tx, leaves map[uint64]treeLeaf) error {
	if len(e.unitPending) == 0 {
		return nil
	}
	ids := make([]uint64, 0, len(e.unitPending))
	for id := range e.unitPending {
		ids = append(ids, id)
	}
	clear(e.unitPending)
	slices.Sort(ids)
	for _, id := range ids {
		if err := e.writeUnit(tx, id, leaves); err != nil {
			return fmt.Errorf("hmo: event units: %w", err)
		}
	}
	return nil
}

// writeUnit brings segment seg's unit up to date with the tree in tx;
// leaves, when not nil, hold leaves as tx holds them (a leaf without a
// vector is read from tx).
func (e *Engine) writeUnit(tx *bolt.Tx, seg uint64, leaves map[uint64]treeLeaf) error {
	ub := tx.Bucket(bucketEvents)
	if ub == nil {
		return nil
	}
	n, err := e.treeStore(tx, "").Node(seg)
	if err != nil {
		return err
	}
	var old []uint64
	if v := ub.Get(unitKey(seg)); v != nil {
		u, err := event.Decode(v)
		if err != nil {
			return fmt.Errorf("%w: unit %d: %w", ErrCorrupt, seg, err)
		}
		old = u.Turns
	}
	var turns []uint64
	if n != nil && n.Level == 1 {
		turns = n.Children
	}
	for _, t := range old {
		if !slices.Contains(turns, t) && keyU64(ub.Get(turnKey(t))) == seg {
			if err := ub.Delete(turnKey(t)); err != nil {
				return err
			}
		}
	}
	if len(turns) == 0 {
		return ub.Delete(unitKey(seg))
	}
	u := event.Unit{Turns: turns}
	vs := e.storedVectors(tx)
	vecs := make([][]float32, len(turns))
	recs := make([]*Record, len(turns))
	for i, id := range turns {
		if l := leaves[id]; l.vec != nil {
			vecs[i] = l.vec
			recs[i] = &Record{Scope: l.scope, Text: l.text}
		} else if v, err := vs.get(id); err == nil {
			vecs[i] = v
		}
		if keyU64(ub.Get(turnKey(id))) == seg {
			continue // unchanged: the page is not written again
		}
		if err := ub.Put(turnKey(id), u64key(seg)); err != nil {
			return err
		}
	}
	text := func(i int) string {
		if recs[i] == nil {
			r, err := getRecord(tx, turns[i])
			if err != nil {
				return "" // gone: nothing to summarise
			}
			recs[i] = &r
		}
		return recs[i].Text
	}
	u.Summary = event.Summarise(vecs, text, event.DefaultSummaryRunes)
	if recs[0] != nil {
		u.Scope = recs[0].Scope
	} else if r, err := getRecord(tx, turns[0]); err == nil {
		u.Scope = r.Scope
	}
	return ub.Put(unitKey(seg), event.Encode(&u))
}

// syncEvents rebuilds the units from the segment tree when the bucket was
// built by another version or over another tree layout. A read-only store
// keeps the units it has.
func (e *Engine) syncEvents() error {
	want := e.eventsVersion()
	if current, err := e.metaIs(metaEvents, want); err != nil || current || e.opts.ReadOnly {
		return err
	}
	return e.db.Update(func(tx *bolt.Tx) error { return e.rebuildEvents(tx, want) })
}

// rebuildEvents writes every level-1 segment's unit afresh.
func (e *Engine) rebuildEvents(tx *bolt.Tx, layout string) error {
	clear(e.unitPending)
	if _, err := freshBucket(tx, bucketEvents); err != nil {
		return err
	}
	var segs []uint64
	c := tx.Bucket(bucketSegTree).Cursor()
	for k, v := c.Seek([]byte("n")); k != nil && k[0] == 'n'; k, v = c.Next() {
		n, err := decodeNode(keyU64(k[1:]), v)
		if err != nil {
			return err
		}
		if n.Level == 1 {
			segs = append(segs, n.ID)
		}
	}
	for _, s := range segs {
		if err := e.writeUnit(tx, s, nil); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketMeta).Put(metaEvents, []byte(layout))
}

// Episode returns record id's event unit (HyMem's, and xMemory's
// episode): its level-1 segment, the unit's records in time order and its
// Level-1 summary; segment 0 when the record has none.
func (e *Engine) Episode(id uint64) (seg uint64, members []uint64, summary string, err error) {
	if err := e.checkOpen(); err != nil {
		return 0, nil, "", err
	}
	err = e.db.View(func(tx *bolt.Tx) error {
		ub := tx.Bucket(bucketEvents)
		if ub == nil {
			return nil
		}
		seg = keyU64(ub.Get(turnKey(id)))
		v := ub.Get(unitKey(seg))
		if seg == 0 || v == nil {
			seg = 0
			return nil
		}
		u, err := event.Decode(v)
		if err != nil {
			seg = 0
			return fmt.Errorf("%w: unit %d: %w", ErrCorrupt, seg, err)
		}
		members, summary = u.Turns, u.Summary
		return nil
	})
	return seg, members, summary, err
}

// EventUnits returns every stored event unit by segment; for inspection
// and tests.
func (e *Engine) EventUnits() (map[uint64]event.Unit, error) {
	if err := e.checkOpen(); err != nil {
		return nil, err
	}
	out := map[uint64]event.Unit{}
	err := e.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketEvents).Cursor()
		for k, v := c.Seek([]byte("u")); k != nil && k[0] == 'u'; k, v = c.Next() {
			u, err := event.Decode(v)
			if err != nil {
				return fmt.Errorf("%w: unit: %w", ErrCorrupt, err)
			}
			out[keyU64(k[1:])] = *u
		}
		return nil
	})
	return out, err
}
