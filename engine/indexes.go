package engine

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// Change-log operations.
const (
	opAdd byte = 'a'
	opDel byte = 'd'
)

// syncChunk is the number of change-log entries applied to an index at once.
const syncChunk = 2048

// vectorBacklog is how many checkpoints' worth of changes may wait for a
// vector index that is not open before a checkpoint opens it. The index is
// a memory-mapped file: keeping it current costs no heap, and spares the
// first archive query a long catch-up after an import.
const vectorBacklog = 1

// closeBacklog is the number of changes a vector index that is not open
// may miss when the store closes; above it, Close opens it and catches it
// up, so that the next process's first archive query does not.
const closeBacklog = 1024

// openIndexes opens the text index. The vector index of the archive opens
// on first use (openVector): a process that is served by the tiers never
// loads the archive's graph, so its memory does not grow with the archive.
func (e *Engine) openIndexes() error {
	text, err := e.opts.OpenTextIndex(filepath.Join(e.dir, TextDir))
	if err != nil {
		e.noteRebuild("text", "could not be opened (%v): rebuilt from the records", err)
		if text, err = e.resetText(); err != nil {
			return err
		}
	}
	e.text = text
	return nil
}

// vectorIndex returns the archive's vector index, opening it and bringing
// it up to date with the change log on first use.
func (e *Engine) vectorIndex() (VectorIndex, error) {
	e.vecMu.RLock()
	v := e.vec
	e.vecMu.RUnlock()
	if v != nil {
		return v, nil
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if err := e.checkOpen(); err != nil {
		return nil, err
	}
	if err := e.openVector(); err != nil {
		return nil, err
	}
	return e.vec, nil
}

// openVector opens the vector index if it is not open and syncs it. The
// caller holds wmu.
func (e *Engine) openVector() error {
	if e.vec != nil {
		return nil
	}
	vec, err := e.opts.OpenVectorIndex(filepath.Join(e.dir, e.vecDir), e.dims)
	if err != nil {
		// Derived data: start it afresh, the sync rebuilds it from bbolt.
		e.noteRebuild("vector", "could not be opened (%v): rebuilt from the records", err)
		if vec, err = e.resetVector(); err != nil {
			return err
		}
	}
	e.setVec(vec)
	err = e.syncSide(e.vectorSide(), math.MaxUint64)
	if err != nil && e.opts.ReadOnly {
		// The index on disk is behind the records (or was never
		// written) and cannot be written now: catch up in memory.
		vec.Close()
		e.setVec(newMemVectors(e.dims))
		err = e.syncSide(e.vectorSide(), math.MaxUint64)
	}
	if err != nil {
		return fmt.Errorf("hmo: sync vector index: %w", err)
	}
	return nil
}

func (e *Engine) setVec(v VectorIndex) {
	e.vecMu.Lock()
	e.vec = v
	e.vecMu.Unlock()
}

func (e *Engine) resetVector() (VectorIndex, error) {
	dir := filepath.Join(e.dir, e.vecDir)
	if e.opts.ReadOnly {
		// Nothing may be written: rebuild it in memory for this open.
		return newMemVectors(e.dims), nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("hmo: reset vector index: %w", err)
	}
	vec, err := e.opts.OpenVectorIndex(dir, e.dims)
	if err != nil {
		return nil, fmt.Errorf("hmo: open vector index: %w", err)
	}
	return vec, nil
}

func (e *Engine) resetText() (TextIndex, error) {
	if e.opts.ReadOnly && e.opts.NewTierTextIndex != nil {
		// Nothing may be written: rebuild it in memory for this open.
		return e.opts.NewTierTextIndex()
	}
	dir := filepath.Join(e.dir, TextDir)
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("hmo: reset text index: %w", err)
	}
	text, err := e.opts.OpenTextIndex(dir)
	if err != nil {
		return nil, fmt.Errorf("hmo: open text index: %w", err)
	}
	return text, nil
}

func (e *Engine) closeIndexes() error {
	var errs []error
	if e.vec != nil {
		errs = append(errs, e.vec.Close())
	}
	if e.text != nil {
		errs = append(errs, e.text.Close())
	}
	return errors.Join(errs...)
}

// change is one change-log entry.
type change struct {
	seq uint64
	op  byte
	id  uint64
}

// indexSide is one derived index seen through what sync needs of it.
type indexSide struct {
	name      string
	watermark func() (uint64, error)
	// load reads what the index needs of adds in tx and returns the
	// update of the index with them, dels and watermark wm, which may
	// run after tx is closed.
	load  func(tx *bolt.Tx, adds []uint64, dels []uint64, wm uint64) (func() error, error)
	reset func() error
}

// apply loads and applies at once.
func (s indexSide) apply(tx *bolt.Tx, adds, dels []uint64, wm uint64) error {
	update, err := s.load(tx, adds, dels, wm)
	if err != nil {
		return err
	}
	return update()
}

func (e *Engine) vectorSide() indexSide {
	return indexSide{
		name:      "vector",
		watermark: func() (uint64, error) { return e.vec.Watermark(), nil },
		load:      e.loadVector,
		reset: func() error {
			e.vec.Close()
			v, err := e.resetVector()
			e.setVec(v)
			return err
		},
	}
}

// sides lists the open indexes.
func (e *Engine) sides() []indexSide {
	sides := []indexSide{
		{
			name:      "text",
			watermark: e.text.Watermark,
			load:      e.loadText,
			reset: func() error {
				e.text.Close()
				t, err := e.resetText()
				e.text = t
				return err
			},
		},
	}
	if e.vec != nil {
		sides = append(sides, e.vectorSide())
	}
	return sides
}

// syncIndexes applies the change log past each index's watermark. A
// watermark behind the trimmed part of the log means the index missed
// changes that are no longer logged: it is rebuilt from the records.
// The caller holds wmu.
func (e *Engine) syncIndexes() error { return e.syncUpTo(math.MaxUint64) }

// syncUpTo is syncIndexes applying the log only up to sequence limit
// (a rebuild takes all of it): the update of one write (RememberBatches)
// leaves the entries of the next commit, whose records are not in the
// tiers yet, to the next update.
func (e *Engine) syncUpTo(limit uint64) error {
	for _, s := range e.sides() {
		if err := e.syncSide(s, limit); err != nil {
			return fmt.Errorf("hmo: sync %s index: %w", s.name, err)
		}
	}
	return nil
}

func (e *Engine) syncSide(s indexSide, limit uint64) error {
	wm, err := s.watermark()
	if err != nil {
		return err
	}
	var upto uint64
	rebuilt := false
	err = e.db.View(func(tx *bolt.Tx) error {
		last := tx.Bucket(bucketChanges).Sequence()
		if wm > last {
			// The index claims changes the store never made (a store
			// restored from an older copy): rebuild.
			e.noteRebuild(s.name, "its watermark %d is past the change log (%d): index files newer than the store", wm, last)
			rebuilt = true
			return e.rebuildSide(tx, s, last)
		}
		if trimmed := getU64(tx.Bucket(bucketMeta), metaLogTrimmed); wm < trimmed {
			e.noteRebuild(s.name, "its watermark %d is behind the trimmed change log (%d): index files missing or older than the store", wm, trimmed)
			rebuilt = true
			return e.rebuildSide(tx, s, last)
		}
		if wm == 0 && last > 0 && s.name == "text" {
			// The text index opens with every store: empty means its
			// files were lost. (The vector index opens on first use, so
			// empty is its normal first state.)
			e.noteRebuild(s.name, "it was empty (files missing): rebuilt from the change log")
		}
		upto = min(last, limit)
		return nil
	})
	if err != nil || rebuilt {
		return err
	}
	return e.replay(s, wm, upto)
}

// replay applies the log entries after wm, up to upto, in chunks. Each
// chunk is read in a read transaction of its own and applied once it is
// closed: an open reader keeps bbolt from reusing the pages that a commit
// running meanwhile (RememberBatches) frees, and from growing its map.
func (e *Engine) replay(s indexSide, wm, upto uint64) error {
	for wm < upto {
		var update func() error
		var n int
		next := wm
		err := e.db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketChanges).Cursor()
			chunk := make([]change, 0, min(upto-wm, syncChunk))
			for k, v := c.Seek(u64key(wm + 1)); k != nil && keyU64(k) <= upto && len(chunk) < syncChunk; k, v = c.Next() {
				if len(v) != 9 {
					return fmt.Errorf("%w: change-log entry %x", ErrCorrupt, k)
				}
				chunk = append(chunk, change{seq: keyU64(k), op: v[0], id: keyU64(v[1:])})
			}
			if n = len(chunk); n == 0 {
				return nil
			}
			next = chunk[n-1].seq
			var err error
			update, err = e.loadChunk(tx, s, chunk)
			return err
		})
		if err != nil || n == 0 {
			return err
		}
		e.sinceCheckpoint += n
		if err := update(); err != nil {
			return err
		}
		wm = next
	}
	return nil
}

// loadChunk collapses a chunk of entries to the final state of each id
// and loads its update, with the chunk's last sequence as watermark.
func (e *Engine) loadChunk(tx *bolt.Tx, s indexSide, chunk []change) (func() error, error) {
	final := make(map[uint64]byte, len(chunk))
	order := make([]uint64, 0, len(chunk))
	for _, ch := range chunk {
		if _, seen := final[ch.id]; !seen {
			order = append(order, ch.id)
		}
		final[ch.id] = ch.op
	}
	var adds, dels []uint64
	recs := tx.Bucket(bucketRecords)
	for _, id := range order {
		if final[id] == opAdd && recs.Get(u64key(id)) != nil {
			adds = append(adds, id)
		} else {
			dels = append(dels, id)
		}
	}
	return s.load(tx, adds, dels, chunk[len(chunk)-1].seq)
}

// rebuildSide empties an index and loads every record into it.
func (e *Engine) rebuildSide(tx *bolt.Tx, s indexSide, last uint64) error {
	if err := s.reset(); err != nil {
		return err
	}
	c := tx.Bucket(bucketRecords).Cursor()
	var ids []uint64
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		ids = append(ids, keyU64(k))
		if len(ids) == syncChunk {
			if err := s.apply(tx, ids, nil, 0); err != nil {
				return err
			}
			ids = ids[:0]
		}
	}
	return s.apply(tx, ids, nil, last)
}

func (e *Engine) loadVector(tx *bolt.Tx, adds, dels []uint64, wm uint64) (func() error, error) {
	docs := make([]VectorDoc, 0, len(adds))
	vs := e.storedVectors(tx)
	for _, id := range adds {
		v, err := e.freshVector(vs, id)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", id, err)
		}
		r, err := e.record(tx, id)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", id, err)
		}
		docs = append(docs, VectorDoc{ID: id, Vector: v, Scope: r.Scope, Session: r.Session, Time: r.Time})
	}
	return func() error { return e.vec.Apply(docs, dels, wm) }, nil
}

func (e *Engine) loadText(tx *bolt.Tx, adds, dels []uint64, wm uint64) (func() error, error) {
	docs := make([]TextDoc, 0, len(adds))
	for _, id := range adds {
		r, err := e.record(tx, id)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", id, err)
		}
		docs = append(docs, e.textDoc(tx, &r))
	}
	return func() error { return e.text.Apply(docs, dels, wm) }, nil
}

// textDoc is the full-text document of a record: its own text, the text
// of its previous turns in the same session (IndexContext of them) and
// its role unless NoIndexRole, each in a field of its own.
func (e *Engine) textDoc(tx *bolt.Tx, r *Record) TextDoc {
	return e.textDocVia(tx, r, e.record)
}

// textDocVia is textDoc reading r's context turns through get.
func (e *Engine) textDocVia(tx *bolt.Tx, r *Record, get func(*bolt.Tx, uint64) (Record, error)) TextDoc {
	var ctx []string
	for _, p := range e.contextVia(tx, r, get) {
		ctx = append(ctx, p.Text)
	}
	d := TextDoc{ID: r.ID, Text: r.Text, Context: strings.Join(ctx, "\n"), Scope: r.Scope, Session: r.Session, Time: r.Time}
	if !e.opts.NoIndexRole {
		d.Role = r.Role
	}
	return d
}

// indexText is the text embedded for a record: its previous turns in the
// same session (IndexContext of them), then its own text, each as
// "role: text" unless NoIndexRole.
func (e *Engine) indexText(tx *bolt.Tx, r *Record) string {
	var parts []string
	for _, p := range e.contextOf(tx, r) {
		parts = append(parts, e.turnText(&p))
	}
	return strings.Join(append(parts, e.turnText(r)), "\n")
}

// indexParts is indexText(tx, r) as the parts a TextPreparer embeds
// concatenated: each turn's role prefix and text, with "\n" between
// turns. own is r's text prepared; the texts of records in c are taken
// from it, the others prepared here.
func (e *Engine) indexParts(tx *bolt.Tx, r *Record, own PreparedText, tp TextPreparer, c *partsCache) []PreparedText {
	var out []PreparedText
	for _, p := range e.contextOf(tx, r) {
		t, ok := c.texts[p.ID]
		if !ok {
			t = tp.PrepareText(p.Text)
		}
		out = c.turn(out, e, tp, &p, t)
		out = append(out, c.fixed(tp, "\n"))
	}
	return c.turn(out, e, tp, r, own)
}

// partsCache holds what indexParts reuses within one write: the prepared
// texts of the records it created so far, by id, and of role prefixes
// and separators.
type partsCache struct {
	texts map[uint64]PreparedText
	small map[string]PreparedText
}

func (c *partsCache) set(id uint64, t PreparedText) {
	if c.texts == nil {
		c.texts = map[uint64]PreparedText{}
	}
	c.texts[id] = t
}

// fixed is s prepared, once per write.
func (c *partsCache) fixed(tp TextPreparer, s string) PreparedText {
	t, ok := c.small[s]
	if !ok {
		if c.small == nil {
			c.small = map[string]PreparedText{}
		}
		t = tp.PrepareText(s)
		c.small[s] = t
	}
	return t
}

// turn appends turnText(r) as parts: its role prefix, then text, r's
// text prepared.
func (c *partsCache) turn(out []PreparedText, e *Engine, tp TextPreparer, r *Record, text PreparedText) []PreparedText {
	if !e.opts.NoIndexRole && r.Role != "" {
		out = append(out, c.fixed(tp, r.Role+": "))
	}
	return append(out, text)
}

// contextOf returns the turns indexed with r as its context, oldest
// first: its IndexContext previous turns in the session. Derived records
// (StandaloneRoles) have no context and are nobody's context.
func (e *Engine) contextOf(tx *bolt.Tx, r *Record) []Record {
	return e.contextVia(tx, r, e.record)
}

// contextVia is contextOf reading the records through get.
func (e *Engine) contextVia(tx *bolt.Tx, r *Record, get func(*bolt.Tx, uint64) (Record, error)) []Record {
	if e.opts.standalone(r) {
		return nil
	}
	var out []Record
	for prev, n, hops := r.Prev, e.opts.contextTurns(), 0; prev != 0 && len(out) < n && hops < maxContextHops; hops++ {
		p, err := get(tx, prev)
		if err != nil {
			break
		}
		if !e.opts.standalone(&p) {
			out = append(out, p)
		}
		prev = p.Prev
	}
	slices.Reverse(out)
	return out
}

// maxContextHops bounds the records indexText steps over to find its
// context turns (derived records between turns are skipped).
const maxContextHops = 64

func (e *Engine) turnText(r *Record) string {
	if e.opts.NoIndexRole || r.Role == "" {
		return r.Text
	}
	return r.Role + ": " + r.Text
}

// checkpoint saves the vector index and trims the change log up to the
// lowest durable watermark. The caller holds wmu.
func (e *Engine) checkpoint() error {
	if e.opts.ReadOnly {
		return nil
	}
	if e.vec == nil {
		// The log is kept until the vector index has seen it; once the
		// backlog is large, catch the index up now rather than on the
		// first archive query.
		if e.sinceCheckpoint < vectorBacklog*e.opts.CheckpointLog {
			return nil
		}
		if err := e.openVector(); err != nil {
			return err
		}
	}
	if err := e.vec.Save(); err != nil {
		return fmt.Errorf("hmo: save vector index: %w", err)
	}
	twm, err := e.textDurable()
	if err != nil {
		return err
	}
	upto := min(e.vec.Watermark(), twm)
	e.sinceCheckpoint = 0
	return e.db.Update(func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if upto <= getU64(m, metaLogTrimmed) {
			return nil
		}
		c := tx.Bucket(bucketChanges).Cursor()
		end := u64key(upto)
		for k, _ := c.First(); k != nil && bytes.Compare(k, end) <= 0; k, _ = c.First() {
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return putU64(m, metaLogTrimmed, upto)
	})
}

// textDurable is the text index's watermark that survives a crash.
func (e *Engine) textDurable() (uint64, error) {
	if d, ok := e.text.(DurableWatermarker); ok {
		return d.DurableWatermark()
	}
	return e.text.Watermark()
}

// maybeCheckpoint runs a checkpoint once enough changes accumulated.
// The caller holds wmu.
func (e *Engine) maybeCheckpoint() error {
	if e.sinceCheckpoint < e.opts.CheckpointLog {
		return nil
	}
	return e.checkpoint()
}
