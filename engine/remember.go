package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/entity"
)

// Remember stores records in one bbolt transaction and returns their ids,
// in input order. Either every input is stored or none is: an invalid
// input rejects the whole batch and changes nothing. An input already
// stored (see RememberBatch) is not stored again: its id is the stored
// record's. The indexes are updated after the commit; a crash in between
// is repaired on the next Open.
func (e *Engine) Remember(ctx context.Context, ins ...Input) ([]uint64, error) {
	out, err := e.RememberBatch(ctx, Batch{Inputs: ins})
	if out == nil {
		return nil, err
	}
	ids := make([]uint64, len(out))
	for i := range out {
		ids[i] = out[i].ID
	}
	return ids, err
}

// RememberBatch stores a batch in one bbolt transaction and says, per
// input, which record holds it. Inputs already stored are not stored
// again: the same scope and normalised text (NormalizeText), or the same
// scope, role and sources, as a stored record or an earlier input of the
// batch. The check and the write share one transaction, so concurrent
// writers and crashes cannot make duplicates. A non-nil error with a
// non-nil result means the batch is stored and an index or tier update
// was deferred.
func (e *Engine) RememberBatch(ctx context.Context, b Batch) ([]Stored, error) {
	if err := e.checkOpen(); err != nil {
		return nil, err
	}
	if len(b.Inputs) == 0 {
		return nil, nil
	}
	if err := e.checkBatch(&b); err != nil {
		return nil, err
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if err := e.checkOpen(); err != nil {
		return nil, err
	}
	c, err := e.commitBatch(ctx, &b, nil)
	if err != nil {
		return nil, err
	}
	if len(c.ids) == 0 {
		return c.out, nil
	}
	e.committed(c.ids)
	e.fresh.Store(&c.fresh)
	defer e.fresh.Store(nil)
	return c.out, e.afterCommit(c)
}

func validateKey(k string) error {
	switch {
	case len(k) > MaxKeyBytes:
		return fmt.Errorf("%w: idempotency key is %d bytes, limit %d", ErrInvalidInput, len(k), MaxKeyBytes)
	case !utf8.ValidString(k):
		return fmt.Errorf("%w: idempotency key", ErrInvalidUTF8)
	case strings.ContainsRune(k, 0):
		return fmt.Errorf("%w: idempotency key contains NUL", ErrInvalidInput)
	}
	return nil
}

// commit is what a write transaction did.
type commit struct {
	out   []Stored   // the outcome per input
	ids   []uint64   // the records created
	fresh freshWrite // those records and their vectors
	seq   uint64     // the change log's last sequence after it
}

// commitBatch stores b's new inputs. pre, when not nil, is b's
// prepared inputs (prepare).
func (e *Engine) commitBatch(ctx context.Context, b *Batch, pre []prepared) (commit, error) {
	var out []Stored
	var observed []string
	var created []uint64
	var fresh freshWrite
	var seq uint64
	err := e.db.Update(func(tx *bolt.Tx) error {
		observed, created = nil, nil
		fresh = freshWrite{recs: freshRecords{}, vecs: map[uint64][]float32{}}
		if b.Key != "" {
			var err error
			if out, err = replay(tx, b.Key, b.Inputs); err != nil || out != nil {
				return err
			}
		}
		var err error
		if out, created, observed, err = e.putInputs(ctx, tx, b.Inputs, pre, true, &fresh); err != nil {
			return err
		}
		if b.Key != "" {
			if err := registerBatchKey(tx, b.Key, b.Inputs, out); err != nil {
				return err
			}
		}
		if err := addCount(tx, len(created)); err != nil {
			return err
		}
		seq = tx.Bucket(bucketChanges).Sequence()
		return e.saveCorpus(tx)
	})
	e.applyEntities(err)
	if err != nil {
		if e.corpus != nil && observed != nil {
			e.corpus.Forget(observed)
		}
		return commit{}, err
	}
	return commit{out: out, ids: created, fresh: fresh, seq: seq}, nil
}

// prepared is what storing an input needs that depends on the input
// alone: RememberBatches computes a batch's while the previous batch
// commits.
type prepared struct {
	keys identity
	i0   float64
	ents []entity.Mention // when timed
	// timed: the input has its own time, so ents are its entities (an
	// input without one gets the commit's clock).
	timed bool
	// text is the input's text prepared by the embedder, when it is a
	// TextPreparer (Engine.preparer).
	text PreparedText
}

// prepare computes the prepared inputs of ins, which are valid. It reads
// nothing of the store, so it can run beside a transaction; it calls
// Options.Importance once per input, and RememberBatches never runs two
// prepare calls, nor a prepare and a commit without one, at a time.
func (e *Engine) prepare(ins []Input) []prepared {
	out := make([]prepared, len(ins))
	tp := e.preparer()
	for i := range ins {
		in := &ins[i]
		out[i] = prepared{keys: identityOf(in.Scope, in.Role, in.Text, in.Sources), i0: e.importance(in.Text)}
		if tp != nil {
			out[i].text = tp.PrepareText(in.Text)
		}
		if !in.Time.IsZero() {
			out[i].timed = true
			out[i].ents = entity.Extract(in.Text, in.Time.UTC())
		}
	}
	return out
}

// preparer is the embedder as a TextPreparer, or nil when it is none or
// is not the engine's CorpusAware (whose Observe the prepared texts
// replace).
func (e *Engine) preparer() TextPreparer {
	tp, ok := e.opts.Embedder.(TextPreparer)
	if !ok || e.corpus != nil && any(e.corpus) != any(tp) {
		return nil
	}
	return tp
}

// importance is I0 of a new record with text.
func (e *Engine) importance(text string) float64 {
	if e.opts.Importance == nil {
		return DefaultImportance
	}
	return clampImportance(e.opts.Importance.Importance(text))
}

// putInputs stores ins and returns the outcome per input, the ids
// created and the texts added to the embedder's corpus statistics. pre,
// when not nil, is ins prepared (prepare). With dedup, inputs already
// stored are not stored again and the corpus statistics take the new
// texts (Update keeps them itself). fresh, when not nil, receives the
// records created and their vectors as stored.
func (e *Engine) putInputs(ctx context.Context, tx *bolt.Tx, ins []Input, pre []prepared, dedup bool, fresh *freshWrite) ([]Stored, []uint64, []string, error) {
	recs := tx.Bucket(bucketRecords)
	now := e.opts.Clock()
	out := make([]Stored, len(ins))
	var ids []uint64
	var embedTexts, texts []string
	var added []*Record
	var leaves []htreeChange
	// With prepared inputs and a TextPreparer, the embedder's work in
	// the transaction is only weighting: the texts to embed are given as
	// their prepared parts (indexParts).
	var tp TextPreparer
	if pre != nil {
		tp = e.preparer()
	}
	var parts partsCache
	var tails sessionTails
	var embedParts [][]PreparedText
	var prepTexts []PreparedText
	for i := range ins {
		in := &ins[i]
		var p *prepared
		if pre != nil {
			p = &pre[i]
		}
		var keys identity
		if p != nil {
			keys = p.keys
		} else {
			keys = identityOf(in.Scope, in.Role, in.Text, in.Sources)
		}
		if dedup {
			if id := findDuplicate(tx, keys); id != 0 {
				out[i] = Stored{ID: id, Duplicate: true}
				if err := e.mergeDuplicate(tx, id, &ins[i]); err != nil {
					return nil, nil, nil, err
				}
				if fresh != nil {
					delete(fresh.recs, id) // its sources may have changed
				}
				continue
			}
		}
		id, err := recs.NextSequence()
		if err != nil {
			return nil, nil, nil, err
		}
		r := e.newRecord(tx, id, &ins[i], now, p, &tails)
		if err := putRecord(tx, &r, e.opts.CompressAbove); err != nil {
			return nil, nil, nil, err
		}
		if err := e.link(tx, &r, &tails); err != nil {
			return nil, nil, nil, err
		}
		var ents []entity.Mention
		if p != nil && p.timed {
			ents = p.ents
		} else {
			ents = entity.Extract(r.Text, r.Time)
		}
		if err := e.putEntities(tx, &r, ents); err != nil {
			return nil, nil, nil, err
		}
		if err := tails.ensureSeq(tx, &r); err != nil {
			return nil, nil, nil, err
		}
		register := registerKeys
		if dedup {
			register = registerNewKeys // findDuplicate found neither key
		}
		if err := register(tx, id, keys); err != nil {
			return nil, nil, nil, err
		}
		out[i] = Stored{ID: id}
		if fresh != nil {
			fresh.recs[id] = &r
		}
		added = append(added, &r)
		leaves = append(leaves, htreeChange{id: id, scope: r.Scope, at: r.Time})
		ids = append(ids, id)
		texts = append(texts, r.Text)
		if tp != nil {
			own := p.text
			if own == nil {
				own = tp.PrepareText(r.Text)
			}
			parts.set(id, own)
			prepTexts = append(prepTexts, own)
			embedParts = append(embedParts, e.indexParts(tx, &r, own, tp, &parts))
		} else {
			embedTexts = append(embedTexts, e.indexText(tx, &r))
		}
	}
	if len(ids) == 0 {
		return out, nil, nil, nil
	}
	if err := tails.flush(tx); err != nil {
		return nil, nil, nil, err
	}
	var observed []string
	if dedup && e.corpus != nil {
		if tp != nil {
			tp.ObservePrepared(prepTexts)
		} else {
			e.corpus.Observe(texts)
		}
		observed = texts
	}
	var vecs [][]float32
	var err error
	if tp != nil {
		vecs, err = tp.EmbedPrepared(ctx, embedParts)
	} else {
		vecs, err = e.opts.Embedder.Embed(ctx, embedTexts)
	}
	if err != nil {
		return nil, nil, observed, fmt.Errorf("hmo: embed: %w", err)
	}
	if err := e.putVectors(tx, ids, vecs); err != nil {
		return nil, nil, observed, err
	}
	if fresh != nil {
		for i, id := range ids {
			fresh.vecs[id] = vecs[i]
		}
	}
	// The themes' Adds run beside the segment tree and the change log.
	themes, err := e.themesStart(tx, added, vecs)
	if err != nil {
		return nil, nil, observed, err
	}
	defer themes.abort()
	e.addHTreeLeaves(leaves, vecs)
	if err := e.treeInsert(tx, added, vecs); err != nil {
		return nil, nil, observed, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, observed, err
	}
	if err := e.enqueue(tx, ids); err != nil {
		return nil, nil, observed, err
	}
	if err := logChanges(tx, opAdd, ids); err != nil {
		return nil, nil, observed, err
	}
	return out, ids, observed, themes.finish(tx)
}

// newRecord is the record input in becomes under id; p, when not nil,
// is in prepared. Its Prev is the last record of its session, as tails
// knows it.
func (e *Engine) newRecord(tx *bolt.Tx, id uint64, in *Input, now time.Time, p *prepared, tails *sessionTails) Record {
	t := in.Time
	if t.IsZero() {
		t = now
	}
	var i0 float64
	if p != nil {
		i0 = p.i0
	} else {
		i0 = e.importance(in.Text)
	}
	return Record{
		ID: id, Scope: in.Scope, Session: in.Session, Role: in.Role,
		Time: t.UTC(), Created: now.UTC(), Text: in.Text, Sources: in.Sources,
		Prev:   tails.last(tx, in.Scope, in.Session),
		Header: Header{I0: i0, LastUsed: t.UTC(), Tier: TierArchive},
	}
}

func clampImportance(v float64) float64 {
	if math.IsNaN(v) {
		return DefaultImportance
	}
	return min(max(v, 1), 10)
}

func (e *Engine) putVectors(tx *bolt.Tx, ids []uint64, vecs [][]float32) error {
	if len(vecs) != len(ids) {
		return fmt.Errorf("hmo: embedder returned %d vectors for %d texts", len(vecs), len(ids))
	}
	vb := tx.Bucket(bucketVectors)
	for i, v := range vecs {
		if len(v) != e.dims {
			return fmt.Errorf("%w: embedder returned %d, store has %d", ErrDims, len(v), e.dims)
		}
		if err := vb.Put(u64key(ids[i]), encodeVector(v)); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) saveCorpus(tx *bolt.Tx) error {
	if e.corpus == nil {
		return nil
	}
	st, err := e.corpus.MarshalState()
	if err != nil {
		return fmt.Errorf("hmo: embedder corpus state: %w", err)
	}
	return tx.Bucket(bucketMeta).Put(metaCorpus, st)
}

func putRecord(tx *bolt.Tx, r *Record, compressAbove int) error {
	b, err := encodeRecord(r, compressAbove)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketRecords).Put(u64key(r.ID), b)
}

func getRecord(tx *bolt.Tx, id uint64) (Record, error) {
	return getRecordFrom(tx.Bucket(bucketRecords), id)
}

// getRecordFrom is getRecord reading the records bucket through recs (a
// pageReader's bucket on the query path).
func getRecordFrom(recs kvGetter, id uint64) (Record, error) {
	var b []byte
	if recs != nil {
		b = peekValue(recs, u64key(id)) // decoded at once
	}
	if b == nil {
		return Record{}, fmt.Errorf("%w: record %d", ErrNotFound, id)
	}
	return decodeRecord(b)
}

// link makes r the last record of its session and indexes it by time.
func (e *Engine) link(tx *bolt.Tx, r *Record, tails *sessionTails) error {
	tails.set(r.Scope, r.Session, r.ID)
	if r.Prev != 0 {
		if err := putU64(tx.Bucket(bucketNext), u64key(r.Prev), r.ID); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketByTime).Put(timeKey(r.Time, r.ID), nil)
}

// sessionTails is what a write transaction's new records did to the
// sessions (bucketSessions, bucketSessSeq): the last record of each
// session, held until flush writes it, and the sessions whose ordinal it
// made sure of. The records of a batch mostly continue the session of the
// record before, whose key would otherwise be read and written in the
// bucket for each. Only putInputs reads the sessions bucket in its
// transaction.
type sessionTails struct {
	tail  map[string]uint64 // scope\x00session -> last record
	keys  []string          // of tail, in the order first set
	seqOK map[string]bool   // sessions known to have an ordinal
}

// last is the last record of the session in tx as it stands.
func (t *sessionTails) last(tx *bolt.Tx, scope, session string) uint64 {
	if id, ok := t.tail[scope+"\x00"+session]; ok {
		return id
	}
	return getU64(tx.Bucket(bucketSessions), sessionKey(scope, session))
}

// set makes id the last record of the session.
func (t *sessionTails) set(scope, session string, id uint64) {
	k := scope + "\x00" + session
	if t.tail == nil {
		t.tail = map[string]uint64{}
	}
	if _, ok := t.tail[k]; !ok {
		t.keys = append(t.keys, k)
	}
	t.tail[k] = id
}

// ensureSeq gives r's session an ordinal if it has none (sessionSeq).
func (t *sessionTails) ensureSeq(tx *bolt.Tx, r *Record) error {
	k := r.Scope + "\x00" + r.Session
	if t.seqOK[k] {
		return nil
	}
	if _, err := sessionSeq(tx, r); err != nil {
		return err
	}
	if t.seqOK == nil {
		t.seqOK = map[string]bool{}
	}
	t.seqOK[k] = true
	return nil
}

// flush writes the sessions' last records.
func (t *sessionTails) flush(tx *bolt.Tx) error {
	b := tx.Bucket(bucketSessions)
	for _, k := range t.keys {
		if err := putU64(b, []byte(k), t.tail[k]); err != nil {
			return err
		}
	}
	t.keys = t.keys[:0]
	clear(t.tail)
	return nil
}

func sessionKey(scope, session string) []byte {
	return []byte(scope + "\x00" + session)
}

// timeKey orders records by event time, then id.
func timeKey(t time.Time, id uint64) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano())^(1<<63))
	return binary.BigEndian.AppendUint64(k, id)
}

func logChanges(tx *bolt.Tx, op byte, ids []uint64) error {
	b := tx.Bucket(bucketChanges)
	for _, id := range ids {
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		v := append([]byte{op}, u64key(id)...)
		if err := b.Put(u64key(seq), v); err != nil {
			return err
		}
	}
	return nil
}

// addCount adjusts the record count kept in meta.
func addCount(tx *bolt.Tx, n int) error {
	m := tx.Bucket(bucketMeta)
	return putU64(m, metaCount, uint64(int64(getU64(m, metaCount))+int64(n)))
}
