package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/persona"
	"github.com/hmo-dev/hmo/tiers"
)

var (
	bucketActive  = []byte("active")  // id -> tiers.Entry (encodeEntry; JSON in older stores) of records in tiers 1 and 2
	bucketSessSeq = []byte("sessseq") // scope\x00session -> session ordinal
	metaPersona   = []byte("persona")
	metaTierStats = []byte("tierstats") // TierStats counters (JSON), so hit rates span processes
)

// tierState is the HMO orchestration of a tiered engine.
type tierState struct {
	mgr  *tiers.Manager   // safe for concurrent use
	pers *persona.Persona // safe for concurrent use

	mu       sync.Mutex // guards the fields below
	views    [3]*view   // views[1] and views[2]; views[0] unused
	dirty    map[uint64]bool
	accessed map[uint64]Header // headers of tier-3 records (accessed or demoted) not yet written back
	stats    TierStats
	counted  bool       // stats changed since the last flush
	batch    *moveBatch // non-nil while admit defers the views' changes
	// accessErr is the error of the access a recall made after its reply
	// (recallTiered), for the next recall, Access or Close to report.
	accessErr error

	// jobs counts the goroutines making a recall's access after its
	// reply: each holds mu until the access is made, then ends.
	jobs sync.WaitGroup

	// flushMu is held while a flush takes its snapshot and writes it, so
	// that flushes commit in the order of their snapshots. Taken after mu
	// when both are held.
	flushMu sync.Mutex
	flusher *flusher // nil until startFlusher, and in a read-only open
}

// moveBatch collects the tier moves of one admitted batch, so that each
// record is loaded into (or dropped from) the views once, at its final
// tier: a batch larger than Tier 1 would otherwise load most of its
// records into Tier 1, then move them on to Tier 2 or out, analysing
// their text each time.
type moveBatch struct {
	from map[uint64]uint8     // tier before the batch of each record that moved
	hdr  map[uint64]Header    // header of each record at its last move into Tier 1 or 2
	vecs map[uint64][]float32 // vectors of the new records (alignment)
}

// TierStats counts what the tier walk did.
type TierStats struct {
	Queries    uint64    `json:"queries"`
	Served     [4]uint64 `json:"served"` // queries answered by tier 1, 2 or 3 (index = tier)
	Scored     uint64    `json:"scored"` // candidates scored over all queries
	Firings    int       `json:"gate_firings"`
	Tier1      int       `json:"tier1"`
	Tier2      int       `json:"tier2"`
	Promotions uint64    `json:"promotions"`
	Demotions  uint64    `json:"demotions"`
}

func (e *Engine) openTiers() error {
	if e.opts.Mode != ModeTiered {
		return nil
	}
	mgr, err := tiers.New(&e.opts.Tiers)
	if err != nil {
		return fmt.Errorf("hmo: tiers: %w", err)
	}
	pers, err := persona.New(&e.opts.Persona)
	if err != nil {
		return fmt.Errorf("hmo: persona: %w", err)
	}
	ts := &tierState{mgr: mgr, pers: pers, dirty: map[uint64]bool{}, accessed: map[uint64]Header{}}
	for t := 1; t <= 2; t++ {
		if ts.views[t], err = newView(e.opts.NewTierTextIndex); err != nil {
			return err
		}
	}
	// Tier 2's lexical index, which also holds Tier 1, is filled at the
	// first query that Tier 1 does not answer. A recall's access queues
	// its changes to both indexes for their next reader (queuedText).
	ts.views[1].text = newQueuedText(ts.views[1].text)
	ts.views[2].text = newQueuedText(newLazyText(ts.views[2].text))
	ts.views[1].also = ts.views[2].text
	e.tiers = ts
	return e.db.View(func(tx *bolt.Tx) error { return e.restoreTiers(tx) })
}

// restoreTiers loads the persona and the tier membership, and fills the
// views from bbolt: work bounded by the tier caps, not the archive.
func (e *Engine) restoreTiers(tx *bolt.Tx) error {
	ts := e.tiers
	if st := tx.Bucket(bucketMeta).Get(metaPersona); st != nil {
		if err := ts.pers.UnmarshalBinary(st); err != nil {
			return fmt.Errorf("hmo: load persona: %w", err)
		}
	}
	if st := tx.Bucket(bucketMeta).Get(metaTierStats); st != nil {
		if err := json.Unmarshal(st, &ts.stats); err != nil {
			return fmt.Errorf("%w: tier stats: %v", ErrCorrupt, err)
		}
	}
	var entries []tiers.Entry
	err := tx.Bucket(bucketActive).ForEach(func(k, v []byte) error {
		en, err := decodeEntry(v)
		if err != nil {
			return fmt.Errorf("%w: tier entry %d: %v", ErrCorrupt, keyU64(k), err)
		}
		entries = append(entries, en)
		return nil
	})
	if err != nil {
		return err
	}
	moves, err := ts.mgr.Restore(entries)
	if err != nil {
		return fmt.Errorf("hmo: restore tiers: %w", err)
	}
	for _, mv := range moves {
		ts.dirty[mv.ID] = true
	}
	if err := e.loadIntoView(tx, 1, ts.mgr.Members(1)); err != nil {
		return err
	}
	// Tier 2's records and vectors; its documents, which need every
	// record's context turns read, are built when its lexical index is
	// filled (lazyText.applyLater).
	docs, err := e.viewRows(e.readers(tx), ts.mgr.Members(2), nil)
	if err != nil {
		return err
	}
	recs := make([]*Record, 0, len(docs))
	ids := make([]uint64, 0, len(docs))
	ts.views[2].reserve(len(docs), e.dims)
	for i := range docs {
		if err := ts.views[2].put(&docs[i].rec, docs[i].vec); err != nil {
			return err
		}
		// The view's copy: the fill reads the fields a record never
		// changes in place (not its header), and docs is left to the
		// collector.
		id := docs[i].rec.ID
		recs, ids = append(recs, ts.views[2].recs[id]), append(ids, id)
	}
	ts.lazy().applyLater(ids, func() (out []TextDoc, err error) {
		err = e.db.View(func(tx *bolt.Tx) error {
			out = make([]TextDoc, len(recs))
			get := e.preadRecords(tx)
			for i, r := range recs {
				out[i] = e.textDocVia(tx, r, get)
			}
			return nil
		})
		return out, err
	})
	return nil
}

func (e *Engine) loadIntoView(tx *bolt.Tx, tier uint8, ids []uint64) error {
	return e.loadKnown(e.readers(tx), tier, ids, nil)
}

// loadKnown is loadIntoView with what the caller already read of one of
// the records in rd's transaction (an accessed record: its vector, and
// the record itself when no write came since the results were read).
func (e *Engine) loadKnown(rd *txReaders, tier uint8, ids []uint64, known *knownDoc) error {
	docs, err := e.viewDocs(rd, ids, known)
	if err != nil {
		return err
	}
	return e.tiers.views[tier].add(docs)
}

// knownDoc is what the access of a tier-3 record read of it in the
// access's transaction: its vector, and the record when the results that
// hold it were read in a transaction that saw the same commits (nil
// otherwise: it is read again).
type knownDoc struct {
	id  uint64
	rec *Record
	vec []float32
}

// txReaders reads a transaction's records and vectors by pread, each
// bucket's reader made at its first use and kept for the transaction:
// the access of ten results, each with its moves, reads through one of
// each rather than making them for every record.
type txReaders struct {
	e    *Engine
	tx   *bolt.Tx
	recs kvSeeker
	vecs *storedVectors
}

func (e *Engine) readers(tx *bolt.Tx) *txReaders { return &txReaders{e: e, tx: tx} }

func (rd *txReaders) records() kvSeeker {
	if rd.recs == nil {
		rd.recs = rd.e.db.preadBucket(rd.tx, bucketRecords)
	}
	return rd.recs
}

func (rd *txReaders) vectors() storedVectors {
	if rd.vecs == nil {
		vs := rd.e.preadVectors(rd.tx)
		rd.vecs = &vs
	}
	return *rd.vecs
}

// viewDocs reads the view documents of ids from rd's transaction,
// skipping forgotten records; known, if not nil, is what the caller read
// of one of them. The context turns of the indexed documents come from
// the doc cache where it holds them, as the archive's pooled search reads
// them (cachedRecordFrom).
func (e *Engine) viewDocs(rd *txReaders, ids []uint64, known *knownDoc) ([]viewDoc, error) {
	docs, err := e.viewRows(rd, ids, known)
	if len(docs) == 0 {
		return docs, err
	}
	get := e.cachedRecordFrom(rd.records())
	for i := range docs {
		docs[i].text = e.textDocVia(rd.tx, &docs[i].rec, get)
	}
	return docs, err
}

// viewRows is viewDocs without the indexed documents.
func (e *Engine) viewRows(rd *txReaders, ids []uint64, known *knownDoc) ([]viewDoc, error) {
	docs := make([]viewDoc, 0, len(ids))
	for _, id := range ids {
		var r Record
		if known != nil && known.id == id && known.rec != nil {
			r = *known.rec
		} else {
			var err error
			if r, err = e.freshRecord(rd.records(), id); err != nil {
				continue // forgotten; the manager is told on the next flush
			}
		}
		if en, ok := e.tiers.mgr.Entry(id); ok {
			r.Header = headerOf(en)
		}
		var v []float32
		if known != nil && known.id == id && known.vec != nil {
			v = known.vec
		} else {
			var err error
			if v, err = rd.e.freshVector(rd.vectors(), id); err != nil {
				return nil, fmt.Errorf("record %d: %w", id, err)
			}
		}
		docs = append(docs, viewDoc{rec: r, vec: v})
	}
	return docs, nil
}

// sessionSeq returns the ordinal of a record's session, assigning the next
// one to a session seen for the first time.
func sessionSeq(tx *bolt.Tx, r *Record) (uint64, error) {
	b := tx.Bucket(bucketSessSeq)
	k := sessionKey(r.Scope, r.Session)
	if v := b.Get(k); v != nil {
		return keyU64(v), nil
	}
	seq, err := b.NextSequence()
	if err != nil {
		return 0, err
	}
	return seq, putU64(b, k, seq)
}

// bulkFlushRecords is how many dirty tier entries and headers the bulk
// path (RememberBatches) keeps in memory before writing them: about four
// batches of 2,000 (16,384 measured the same CPU, with a larger write).
// A variable for tests.
var bulkFlushRecords = 8192

// admit places newly committed records in the tiers and feeds the persona.
// The tier entries and headers are written before it returns unless bulk
// is set. With bulk, once bulkFlushRecords are dirty the tier flusher is
// asked to write them (flushDueSoon): the bulk path (RememberBatches)
// does not wait for bbolt's write lock, which its commits hold most of
// the time (an import's admissions waited about 0.1 s for it every other
// batch when they wrote themselves; BENCHMARKS.md, session 20). The
// caller flushes what is left at the end (flushAccesses). The caller
// holds wmu.
func (e *Engine) admit(ids []uint64, bulk bool) error {
	ts := e.tiers
	if ts == nil || len(ids) == 0 {
		return nil
	}
	now := e.opts.Clock()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.batch = &moveBatch{from: map[uint64]uint8{}, hdr: map[uint64]Header{}, vecs: map[uint64][]float32{}}
	defer func() { ts.batch = nil }()
	var load func() error
	err := e.db.View(func(tx *bolt.Tx) error {
		for _, id := range ids {
			if err := e.admitOne(tx, id, now); err != nil {
				return err
			}
		}
		var err error
		load, err = e.finishBatch(tx)
		return err
	})
	if err != nil {
		return err
	}
	// The views are loaded with the read transaction closed: a reader
	// open meanwhile would keep bbolt from reusing the pages a concurrent
	// commit frees (RememberBatches).
	if err := load(); err != nil {
		return err
	}
	if !bulk {
		return e.flushTiers()
	}
	if len(ts.dirty)+len(ts.accessed) < bulkFlushRecords {
		return nil
	}
	return e.flushDueSoon()
}

// queuedIndex returns the lexical index of tier t's view (1 or 2).
func (ts *tierState) queuedIndex(t int) *queuedText { return ts.views[t].text.(*queuedText) }

// lazy returns Tier 2's lexical index behind its queue. Its pending
// changes and its fill are its own; changes still queued in front of it
// are not.
func (ts *tierState) lazy() *lazyText { return ts.queuedIndex(2).ix.(*lazyText) }

// activeTier reports whether t is a tier held in RAM (1 or 2), with a
// view.
func activeTier(t uint8) bool { return t == 1 || t == 2 }

// viewRecord returns a record of the view of tier t, if t is 1 or 2.
func (ts *tierState) viewRecord(t uint8, id uint64) (*Record, bool) {
	if !activeTier(t) {
		return nil, false
	}
	r, ok := ts.views[t].recs[id]
	return r, ok
}

// finishBatch applies the net moves of the batch to the views: it takes
// the records leaving them out, reads those entering them from tx and
// returns the loading of those, which needs no transaction. ts.mu is
// held.
func (e *Engine) finishBatch(tx *bolt.Tx) (func() error, error) {
	ts := e.tiers
	b := ts.batch
	ts.batch = nil
	var in [3][]uint64
	for id, from := range b.from {
		to := ts.mgr.Tier(id)
		active := activeTier(to)
		h, loaded := b.hdr[id] // the header of its last move into a tier
		if to == from && (active || !loaded) {
			continue
		}
		if r, ok := ts.viewRecord(from, id); ok {
			if !loaded {
				h, loaded = r.Header, true
			}
			if err := ts.views[from].remove([]uint64{id}); err != nil {
				return nil, err
			}
		}
		if !active && loaded {
			// Leaving the active tiers: its header goes back into the
			// record at the next flush.
			h.Tier = TierArchive
			ts.accessed[id] = h
		}
		if active {
			in[to] = append(in[to], id)
		}
	}
	var docs [3][]viewDoc
	for t := uint8(1); t <= 2; t++ {
		slices.Sort(in[t])
		var err error
		if docs[t], err = e.viewDocs(e.readers(tx), in[t], nil); err != nil {
			return nil, err
		}
	}
	return func() error {
		for t := uint8(1); t <= 2; t++ {
			if err := ts.views[t].add(docs[t]); err != nil {
				return err
			}
			// A view holds the header a record had when it moved in, as
			// if it had been loaded then.
			for _, id := range in[t] {
				if r, ok := ts.views[t].recs[id]; ok {
					if h, ok := b.hdr[id]; ok {
						r.Header = h
					}
				}
			}
		}
		return nil
	}, nil
}

func (e *Engine) admitOne(tx *bolt.Tx, id uint64, now time.Time) error {
	ts := e.tiers
	r, err := e.record(tx, id)
	if err != nil {
		return err
	}
	vec, err := e.freshVector(e.storedVectors(tx), id)
	if err != nil {
		return err
	}
	// The persona refuses vectors it cannot average (a text with no known
	// word embeds to no direction): such a record just does not move it.
	if _, fired, err := ts.pers.Observe(vec, r.Header.I0, r.Text, now); err == nil && fired {
		ts.stats.Firings++
		e.profileFired() // issue 4: the Enricher rewrites the persona profile
		e.applyMoves(tx, ts.mgr.Rescore(now, e.alignment))
		for _, a := range ts.mgr.Members(1) {
			ts.dirty[a] = true
		}
		for _, a := range ts.mgr.Members(2) {
			ts.dirty[a] = true
		}
	}
	seq := keyU64(tx.Bucket(bucketSessSeq).Get(sessionKey(r.Scope, r.Session)))
	en := tiers.Entry{ID: id, Session: r.Session, SessionSeq: seq, I0: r.Header.I0, LastUsed: r.Header.LastUsed, Sp: ts.pers.Alignment(vec)}
	_, moves, err := ts.mgr.Add(en, now)
	if err != nil {
		return fmt.Errorf("hmo: tiers: %w", err)
	}
	if b := ts.batch; b != nil {
		b.vecs[id] = vec
	}
	ts.dirty[id] = true
	return e.applyMoves(tx, moves)
}

// alignment is S_p of an active record, from its cached vector. It runs
// under the manager's lock and ts.mu.
func (e *Engine) alignment(id uint64) float64 {
	if b := e.tiers.batch; b != nil {
		if v, ok := b.vecs[id]; ok {
			return e.tiers.pers.Alignment(v)
		}
	}
	for t := 1; t <= 2; t++ {
		if v, ok := e.tiers.views[t].vec(id); ok {
			return e.tiers.pers.Alignment(v)
		}
	}
	return 0
}

// applyMoves moves records between the views. ts.mu is held.
func (e *Engine) applyMoves(tx *bolt.Tx, moves []tiers.Move) error {
	return e.applyKnown(e.readers(tx), moves, nil)
}

// applyKnown is applyMoves reading through rd, with what the caller read
// of one of the moved records (loadKnown).
func (e *Engine) applyKnown(rd *txReaders, moves []tiers.Move, known *knownDoc) error {
	tx := rd.tx
	ts := e.tiers
	if b := ts.batch; b != nil {
		// Within an admitted batch: note where each record came from;
		// finishBatch moves it once.
		for _, mv := range moves {
			ts.dirty[mv.ID] = true
			if _, seen := b.from[mv.ID]; !seen {
				b.from[mv.ID] = mv.From
			}
			if en, ok := ts.mgr.Entry(mv.ID); ok && activeTier(mv.To) {
				// The header a view would have loaded it with now.
				b.hdr[mv.ID] = headerOf(en)
			}
			if mv.To < mv.From {
				ts.stats.Promotions++
			} else {
				ts.stats.Demotions++
			}
		}
		return nil
	}
	var in [3][]uint64
	for _, mv := range moves {
		ts.dirty[mv.ID] = true
		if activeTier(mv.From) && mv.To == TierArchive {
			if r, ok := ts.views[mv.From].recs[mv.ID]; ok {
				// Leaving the active tiers: its header goes back into
				// the record at the next flush.
				h := r.Header
				h.Tier = TierArchive
				ts.accessed[mv.ID] = h
			}
		}
		switch {
		case activeTier(mv.From) && activeTier(mv.To):
			// Between the views: the record and its vector go across,
			// and Tier 2's index, which holds both, keeps its document.
			moved, err := ts.views[mv.From].transfer(mv.ID, ts.views[mv.To], func(r *Record) TextDoc { return e.textDoc(tx, r) })
			if err != nil {
				return err
			}
			if moved {
				if en, ok := ts.mgr.Entry(mv.ID); ok {
					ts.views[mv.To].recs[mv.ID].Header = headerOf(en)
				}
			} else {
				in[mv.To] = append(in[mv.To], mv.ID)
			}
		case activeTier(mv.From):
			if err := ts.views[mv.From].remove([]uint64{mv.ID}); err != nil {
				return err
			}
		case activeTier(mv.To):
			in[mv.To] = append(in[mv.To], mv.ID)
		}
		if mv.To < mv.From {
			ts.stats.Promotions++
		} else {
			ts.stats.Demotions++
		}
	}
	for t := uint8(1); t <= 2; t++ {
		if err := e.loadKnown(rd, t, in[t], known); err != nil {
			return err
		}
	}
	return nil
}

// flushTiers writes the dirty tier entries and record headers now, after
// any write the flusher has in progress. ts.mu is held.
func (e *Engine) flushTiers() error {
	ts := e.tiers
	if e.opts.ReadOnly || !ts.flushDue() {
		return nil // accesses of a read-only open stay in memory
	}
	ts.flushMu.Lock()
	snap, err := ts.snapshot()
	if err == nil {
		err = e.writeTiers(snap)
	}
	ts.flushMu.Unlock()
	ts.flushed(snap, err)
	return err
}

// flushDue reports whether anything is to be written. ts.mu is held.
func (ts *tierState) flushDue() bool { return len(ts.dirty) > 0 || ts.counted }

// tierSnapshot is what one flush writes: the dirty records' tier entries
// or archive headers as they were when it was taken, and the counters
// and persona.
type tierSnapshot struct {
	ids     []uint64
	entries [][]byte          // encoded tier entry of ids[i]; nil when it is in the archive
	headers map[uint64]Header // the header kept in memory of an archived one (ts.accessed); none: the stored one
	stats   []byte
	persona []byte
	gone    []uint64 // records found deleted when written: the manager forgets them
}

// snapshot takes what is dirty and marks it clean: an access after it
// makes its record dirty again. The archive headers stay in ts.accessed
// (reads overlay them) until the write is committed (flushed). ts.mu
// and ts.flushMu are held.
func (ts *tierState) snapshot() (*tierSnapshot, error) {
	// In key order: each leaf page is visited while it is in cache (a
	// bulk import flushes thousands at once).
	snap := &tierSnapshot{ids: slices.Sorted(maps.Keys(ts.dirty)), headers: map[uint64]Header{}}
	snap.entries = make([][]byte, len(snap.ids))
	for i, id := range snap.ids {
		if en, active := ts.mgr.Entry(id); active {
			snap.entries[i] = encodeEntry(&en)
		} else if h, ok := ts.accessed[id]; ok {
			snap.headers[id] = h
		}
	}
	var err error
	if snap.stats, err = json.Marshal(ts.stats); err != nil {
		return nil, err
	}
	if snap.persona, err = ts.pers.MarshalBinary(); err != nil {
		return nil, err
	}
	clear(ts.dirty)
	ts.counted = false
	return snap, nil
}

// flushed ends a flush: after a commit, the archive headers written are
// dropped from memory unless an access changed them since, and records
// found deleted are forgotten; after a failure, what the snapshot held is
// dirty again, for the next flush. ts.mu is held.
func (ts *tierState) flushed(snap *tierSnapshot, err error) {
	if snap == nil {
		return
	}
	if err != nil {
		for _, id := range snap.ids {
			ts.dirty[id] = true
		}
		ts.counted = true
		return
	}
	for id, h := range snap.headers {
		if cur, ok := ts.accessed[id]; ok && cur == h {
			delete(ts.accessed, id)
		}
	}
	for _, id := range snap.gone {
		ts.mgr.Forget(id)
	}
}

// writeTiers commits a snapshot. An active record's header lives in the
// active bucket only (the record is not rewritten on every access: reads
// overlay it); a record leaving the active tiers gets its header written
// back into the record. It needs neither ts.mu nor wmu: bbolt serialises
// it with the writers, and ts.flushMu with the other flushes, in the
// order of their snapshots.
func (e *Engine) writeTiers(snap *tierSnapshot) error {
	snap.gone = snap.gone[:0]
	return e.db.Update(func(tx *bolt.Tx) error {
		ab, rb := tx.Bucket(bucketActive), tx.Bucket(bucketRecords)
		for i, id := range snap.ids {
			key := u64key(id)
			stored := rb.Get(key)
			if stored == nil {
				snap.gone = append(snap.gone, id)
				if err := ab.Delete(key); err != nil {
					return err
				}
				continue
			}
			if snap.entries[i] != nil {
				if err := ab.Put(key, snap.entries[i]); err != nil {
					return err
				}
				continue
			}
			h, ok := snap.headers[id]
			if !ok {
				// No header kept in memory: the stored one, in the archive.
				var err error
				if h, err = recordHeader(stored); err != nil {
					return err
				}
				h.Tier = TierArchive
			}
			b, err := withHeader(stored, h, e.opts.CompressAbove)
			if err != nil {
				return err
			}
			if err := ab.Delete(key); err != nil {
				return err
			}
			if err := rb.Put(key, b); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketMeta).Put(metaTierStats, snap.stats); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(metaPersona, snap.persona)
	})
}

// flushAccesses writes the access headers kept in memory, so that what
// is stored is current.
func (e *Engine) flushAccesses() error {
	if e.tiers == nil {
		return nil
	}
	e.tiers.mu.Lock()
	defer e.tiers.mu.Unlock()
	return e.flushTiers()
}

// evict drops forgotten records from the tiers and views, and reloads the
// touched records (re-indexed without the forgotten context) into theirs.
// The caller holds wmu.
func (e *Engine) evict(ids, touched []uint64, texts []string) error {
	ts := e.tiers
	if ts == nil {
		return nil
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	forgot := false
	for _, t := range texts {
		forgot = ts.pers.ForgetText(t) || forgot
	}
	if forgot {
		// Persist the profile now: it must not keep the text on disk.
		if err := e.persistPersona(); err != nil {
			return err
		}
	}
	return e.db.View(func(tx *bolt.Tx) error {
		for _, id := range ids {
			moves := ts.mgr.Forget(id)
			for t := 1; t <= 2; t++ {
				if err := ts.views[t].remove([]uint64{id}); err != nil {
					return err
				}
			}
			delete(ts.accessed, id)
			delete(ts.dirty, id)
			if err := e.applyMoves(tx, moves); err != nil {
				return err
			}
		}
		for _, id := range touched {
			if t := ts.mgr.Tier(id); activeTier(t) {
				if err := ts.views[t].remove([]uint64{id}); err != nil {
					return err
				}
				if err := e.loadIntoView(tx, t, []uint64{id}); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// TierStats reports the tier walk's counters and the tier sizes. It is
// the zero value in flat mode.
func (e *Engine) TierStats() TierStats {
	ts := e.tiers
	if ts == nil {
		return TierStats{}
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	s := ts.stats
	s.Tier1, s.Tier2 = ts.mgr.Len(1), ts.mgr.Len(2)
	s.Firings = ts.pers.Firings()
	return s
}

// Persona returns the persona, or nil in flat mode.
func (e *Engine) Persona() *persona.Persona {
	if e.tiers == nil {
		return nil
	}
	return e.tiers.pers
}

// overlayHeader replaces r's stored header with the tier state's newer
// one, when accesses or rescoring changed it since the last flush.
func (e *Engine) overlayHeader(r *Record) {
	ts := e.tiers
	if ts == nil {
		return
	}
	ts.mu.Lock() // after the last recall's access (recallTiered)
	defer ts.mu.Unlock()
	e.currentHeader(r)
}

func (e *Engine) putPersona(tx *bolt.Tx) error {
	st, err := e.tiers.pers.MarshalBinary()
	if err != nil {
		return err
	}
	return tx.Bucket(bucketMeta).Put(metaPersona, st)
}

func (e *Engine) persistPersona() error {
	if e.opts.ReadOnly {
		return nil
	}
	return e.db.Update(e.putPersona)
}

func headerOf(en tiers.Entry) Header {
	return Header{I0: en.I0, N: en.N, LastUsed: en.LastUsed, P: en.P, Tier: en.Tier}
}

// storedHeader replaces r's header with the one in the active bucket, where
// the header of a record in Tier 1 or 2 is kept (persistEntry).
func storedHeader(tx *bolt.Tx, r *Record) error {
	v := tx.Bucket(bucketActive).Get(u64key(r.ID))
	if v == nil {
		return nil
	}
	en, err := decodeEntry(v)
	if err != nil {
		return fmt.Errorf("%w: tier entry %d: %v", ErrCorrupt, r.ID, err)
	}
	r.Header = headerOf(en)
	return nil
}
