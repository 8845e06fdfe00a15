package engine

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/xmemory"
)

// xMemory's hierarchy (package xmemory) is kept in bucketXMemory, changed
// in the transaction that changes the records, so it never names a
// record that is gone nor holds a forgotten one's text:
//
//   - "f"+id: a record's semantic fact, scope NUL xmemory.Fact(text) (a
//     turn of LoCoMo states one thing: a message is one fact);
//   - "t"+scope NUL id: a theme, xmemory.EncodeTheme (facts, vector sum,
//     the fact nearest its centroid and that fact as its summary);
//   - "s"+scope: the scope's counters (records, whether it outgrew
//     Options.ThemesMaxRecords, the partition's State).
//
// A message's episode is its HyMem event unit (bucketEvents). Each
// scope's partition is loaded into memory from the bucket the first time
// it is needed. metaXMemory names the version and options the bucket was
// built with; a store without it or with another is rebuilt from the
// records, in id order, on Open (and after Reindex). Since the partition
// depends on the order of its adds alone (xmemory.Options.MaintainEvery),
// the rebuild of a store that only received records equals the stored
// structure.
var (
	bucketXMemory = []byte("xmemory")
	metaXMemory   = []byte("xmemory_version")
)

// themeSummaryRunes bounds a theme's summary, as a segment's
// (segtree.DefaultSummaryRunes).
const themeSummaryRunes = 200

func (e *Engine) xmemoryVersion(emb Embedder) string {
	o, _ := e.opts.Themes.WithDefaults()
	return fmt.Sprintf("xmemory/1 facts=%d attach=%g min=%d near=%d every=%d max=%d runes=%d embedder=%s dims=%d",
		o.MaxFacts, o.Attach, o.MinFacts, o.Neighbours, o.MaintainEvery, e.opts.ThemesMaxRecords, themeSummaryRunes, emb.Name(), emb.Dims())
}

// themeCache holds the partitions of the scopes used so far. Writers
// change them in their transaction (holding wmu and mu); a transaction
// that fails empties the cache, which then reloads from bbolt.
type themeCache struct {
	mu     sync.Mutex // guards the fields below
	off    bool       // a read-only store whose bucket is stale: no themes
	scopes map[string]*scopeThemes
}

type scopeThemes struct {
	n     uint64 // live records of the scope
	large bool   // more than Options.ThemesMaxRecords: no themes
	p     *xmemory.Partition
}

func (c *themeCache) reset() {
	c.mu.Lock()
	c.scopes = nil
	c.mu.Unlock()
}

func factKey(id uint64) []byte { return append([]byte("f"), u64key(id)...) }
func themePrefix(scope string) []byte {
	return append(append([]byte("t"), scope...), 0)
}
func themeKey(scope string, id uint64) []byte { return append(themePrefix(scope), u64key(id)...) }
func scopeKey(scope string) []byte            { return append([]byte("s"), scope...) }

// encodeScopeThemes: large flag, records, partition state.
func encodeScopeThemes(st *scopeThemes) []byte {
	b := []byte{0}
	if st.large {
		b[0] = 1
	}
	b = binary.AppendUvarint(b, st.n)
	return append(b, xmemory.EncodeState(st.p.State())...)
}

// loadThemes returns scope's partition, loading it from tx when it is not
// in memory. The caller holds themes.mu.
func (e *Engine) loadThemes(tx *bolt.Tx, scope string) (*scopeThemes, error) {
	c := &e.themes
	if st := c.scopes[scope]; st != nil {
		return st, nil
	}
	bad := func(what string) error { return fmt.Errorf("%w: xmemory scope %q: %s", ErrCorrupt, scope, what) }
	xb := tx.Bucket(bucketXMemory)
	st := &scopeThemes{}
	var state xmemory.State
	if v := xb.Get(scopeKey(scope)); v != nil {
		n, k := binary.Uvarint(v[min(1, len(v)):])
		if len(v) < 2 || k <= 0 {
			return nil, bad("counters")
		}
		var err error
		if state, err = xmemory.DecodeState(v[1+k:]); err != nil {
			return nil, bad(err.Error())
		}
		st.n, st.large = n, v[0] == 1
	}
	var themes []xmemory.Theme
	vecs := map[uint64][]float32{}
	vs := e.storedVectors(tx)
	pre := themePrefix(scope)
	cur := xb.Cursor()
	for k, v := cur.Seek(pre); k != nil && bytes.HasPrefix(k, pre); k, v = cur.Next() {
		t, err := xmemory.DecodeTheme(v)
		if err != nil {
			return nil, bad(err.Error())
		}
		for _, f := range t.Facts {
			vec, err := vs.get(f)
			if err != nil {
				return nil, bad(fmt.Sprintf("fact %d has no vector", f))
			}
			vecs[f] = vec
		}
		themes = append(themes, t.Theme)
	}
	p, err := xmemory.Restore(e.dims, e.opts.Themes, state, themes, vecs)
	if err != nil {
		return nil, bad(err.Error())
	}
	st.p = p
	if c.scopes == nil {
		c.scopes = map[string]*scopeThemes{}
	}
	c.scopes[scope] = st
	return st, nil
}

// themesAdd adds new records, with their vectors, to their scopes'
// partitions in tx.
//
// A record of a scope that a later record of recs takes past
// Options.ThemesMaxRecords is only counted: the drop at that record
// deletes every fact and theme of the scope, and the scope's counters
// are written again after it, so adding the record first (the scan of
// every theme, its splits, its writes) would leave the same bucket.
func (e *Engine) themesAdd(tx *bolt.Tx, recs []*Record, vecs [][]float32) error {
	c := &e.themes
	c.mu.Lock()
	defer c.mu.Unlock()
	xb := tx.Bucket(bucketXMemory)
	dropAt, err := e.themesDrops(tx, recs)
	if err != nil {
		return err
	}
	for i, r := range recs {
		st, err := e.loadThemes(tx, r.Scope)
		if err != nil {
			return err
		}
		st.n++
		if i < dropAt[r.Scope] {
			continue // dropped at a later record of recs, its counters written then
		}
		if limit := e.opts.ThemesMaxRecords; limit >= 0 && st.n > uint64(limit) && !st.large {
			if err := e.dropScopeThemes(tx, r.Scope, st); err != nil {
				return err
			}
		}
		if !st.large {
			if err := xb.Put(factKey(r.ID), []byte(r.Scope+"\x00"+xmemory.Fact(r.Text))); err != nil {
				return err
			}
			if err := st.p.Add(r.ID, vecs[i]); err != nil {
				return fmt.Errorf("hmo: themes: %w", err)
			}
			if err := e.flushThemes(tx, r.Scope, st); err != nil {
				return err
			}
		}
		if err := xb.Put(scopeKey(r.Scope), encodeScopeThemes(st)); err != nil {
			return err
		}
	}
	return nil
}

// themesDrops returns, for each scope whose themes a record of recs
// drops (the scope passes Options.ThemesMaxRecords at it), that record's
// index in recs. The caller holds themes.mu.
func (e *Engine) themesDrops(tx *bolt.Tx, recs []*Record) (map[string]int, error) {
	limit := e.opts.ThemesMaxRecords
	if limit < 0 || len(recs) < 2 {
		return nil, nil
	}
	var n map[string]uint64 // each scope's count as themesAdd goes
	var at map[string]int
	for i, r := range recs {
		if n == nil {
			n = map[string]uint64{}
		}
		k, ok := n[r.Scope]
		if !ok {
			st, err := e.loadThemes(tx, r.Scope)
			if err != nil {
				return nil, err
			}
			if st.large {
				k = math.MaxUint64 // dropped already: never again
			} else {
				k = st.n
			}
		}
		if k != math.MaxUint64 {
			if k++; k > uint64(limit) {
				if at == nil {
					at = map[string]int{}
				}
				at[r.Scope] = i
				k = math.MaxUint64
			}
		}
		n[r.Scope] = k
	}
	return at, nil
}

// themesJob is themesAdd of one write's new records run beside the rest
// of its transaction: the partitions' Adds (the scan of every theme,
// the splits and merges) touch memory only, so a goroutine runs them
// while the transaction goes on with the segment tree and the change
// log; finish then writes what the Adds changed. Every theme the batch
// changed is written once, with its final facts, sum and summary, and
// every scope's counters once: the values themesAdd leaves, which
// writes them after each record. themes.mu is held from themesStart to
// finish or abort (a reader of the themes, Engine.Themes, waits for the
// Adds and the rest of the transaction's work they run beside).
type themesJob struct {
	e      *Engine
	recs   []*Record
	scopes map[string]*scopeThemes
	order  []string   // the scopes, in the order recs first name them
	done   chan error // the Adds' outcome
	locked bool
}

// themesStart adds recs, with their vectors, to their scopes' partitions
// in tx: it loads the scopes and starts their Adds in a goroutine; the
// caller must call finish (which writes them) or abort on the returned
// job before tx ends, and must not change vecs meanwhile. A batch that
// takes a scope past Options.ThemesMaxRecords is added by themesAdd
// before it returns (the scope's themes are dropped at that record),
// and one whose scopes all outgrew it has only their counters to
// write, written before it returns: the job of either is nil.
func (e *Engine) themesStart(tx *bolt.Tx, recs []*Record, vecs [][]float32) (*themesJob, error) {
	j, err := e.themesJobFor(tx, recs)
	if err != nil || j == nil {
		if err == nil {
			err = e.themesAdd(tx, recs, vecs)
		}
		return nil, err
	}
	if !slices.ContainsFunc(j.order, func(s string) bool { return !j.scopes[s].large }) {
		// Scopes without themes: only their counters, written now.
		return nil, j.finish(tx)
	}
	j.done = make(chan error, 1)
	go func() {
		// A panic in the Adds fails the write instead of the process,
		// and finish and abort never wait for a send that cannot come.
		defer func() {
			if p := recover(); p != nil {
				j.done <- fmt.Errorf("hmo: themes: %v", p)
			}
		}()
		for i, r := range recs {
			if st := j.scopes[r.Scope]; !st.large {
				if err := st.p.Add(r.ID, vecs[i]); err != nil {
					j.done <- fmt.Errorf("hmo: themes: %w", err)
					return
				}
			}
		}
		j.done <- nil
	}()
	return j, nil
}

// themesJobFor loads the scopes of recs and returns their job, holding
// themes.mu, or nil when recs take a scope past
// Options.ThemesMaxRecords.
func (e *Engine) themesJobFor(tx *bolt.Tx, recs []*Record) (*themesJob, error) {
	c := &e.themes
	c.mu.Lock()
	j := &themesJob{e: e, recs: recs, scopes: map[string]*scopeThemes{}}
	defer func() {
		if !j.locked { // nil, an error or a panic (a damaged page)
			c.mu.Unlock()
		}
	}()
	counts := map[string]uint64{}
	for _, r := range recs {
		if _, ok := j.scopes[r.Scope]; !ok {
			st, err := e.loadThemes(tx, r.Scope)
			if err != nil {
				return nil, err
			}
			j.scopes[r.Scope] = st
			j.order = append(j.order, r.Scope)
		}
		counts[r.Scope]++
	}
	if limit := e.opts.ThemesMaxRecords; limit >= 0 {
		for s, st := range j.scopes {
			if !st.large && st.n+counts[s] > uint64(limit) {
				return nil, nil
			}
		}
	}
	j.locked = true // until finish or abort
	return j, nil
}

// finish waits for the Adds and writes their facts, the themes they
// changed and the scopes' counters in tx. A nil job has nothing to do.
func (j *themesJob) finish(tx *bolt.Tx) error {
	if j == nil {
		return nil
	}
	defer j.abort()
	if j.done != nil {
		err := <-j.done
		j.done = nil
		if err != nil {
			return err
		}
	}
	xb := tx.Bucket(bucketXMemory)
	for _, r := range j.recs {
		st := j.scopes[r.Scope]
		st.n++
		if !st.large {
			if err := xb.Put(factKey(r.ID), []byte(r.Scope+"\x00"+xmemory.Fact(r.Text))); err != nil {
				return err
			}
		}
	}
	for _, scope := range j.order {
		st := j.scopes[scope]
		if !st.large {
			if err := j.e.flushThemes(tx, scope, st); err != nil {
				return err
			}
		}
		if err := xb.Put(scopeKey(scope), encodeScopeThemes(st)); err != nil {
			return err
		}
	}
	return nil
}

// abort waits for the Adds, if finish has not, and releases themes.mu;
// the partitions then hold changes tx will not keep unless finish wrote
// them (a failed transaction empties the cache, applyEntities). A nil
// job, or one finished, is left as it is.
func (j *themesJob) abort() {
	if j == nil {
		return
	}
	if j.done != nil {
		<-j.done
		j.done = nil
	}
	if j.locked {
		j.locked = false
		j.e.themes.mu.Unlock()
	}
}

// dropScopeThemes empties a scope that outgrew Options.ThemesMaxRecords.
func (e *Engine) dropScopeThemes(tx *bolt.Tx, scope string, st *scopeThemes) error {
	xb := tx.Bucket(bucketXMemory)
	for _, tid := range st.p.Themes() {
		for _, f := range st.p.Theme(tid).Facts {
			if err := xb.Delete(factKey(f)); err != nil {
				return err
			}
		}
		if err := xb.Delete(themeKey(scope, tid)); err != nil {
			return err
		}
	}
	p, err := xmemory.New(e.dims, e.opts.Themes)
	if err != nil {
		return fmt.Errorf("hmo: themes: %w", err)
	}
	st.p, st.large = p, true
	return nil
}

// themesRemove takes record r (forgotten or superseded) out of its
// scope's partition in tx; the themes it was in get their summaries again
// from the facts that remain.
func (e *Engine) themesRemove(tx *bolt.Tx, r *Record) error {
	c := &e.themes
	c.mu.Lock()
	defer c.mu.Unlock()
	xb := tx.Bucket(bucketXMemory)
	st, err := e.loadThemes(tx, r.Scope)
	if err != nil {
		return err
	}
	if st.n > 0 {
		st.n--
	}
	if err := xb.Delete(factKey(r.ID)); err != nil {
		return err
	}
	if st.p.ThemeOf(r.ID) != 0 {
		st.p.Remove(r.ID)
		if err := e.flushThemes(tx, r.Scope, st); err != nil {
			return err
		}
	}
	return xb.Put(scopeKey(r.Scope), encodeScopeThemes(st))
}

// themesMove follows records re-embedded in tx (their context changed).
func (e *Engine) themesMove(tx *bolt.Tx, ids []uint64, vecs [][]float32) error {
	c := &e.themes
	c.mu.Lock()
	defer c.mu.Unlock()
	xb := tx.Bucket(bucketXMemory)
	for i, id := range ids {
		v := xb.Get(factKey(id))
		j := bytes.IndexByte(v, 0)
		if j < 0 {
			continue // no fact: not in a partition
		}
		scope := string(v[:j])
		st, err := e.loadThemes(tx, scope)
		if err != nil {
			return err
		}
		if st.p.ThemeOf(id) == 0 {
			continue
		}
		if err := st.p.Add(id, vecs[i]); err != nil {
			return fmt.Errorf("hmo: themes: %w", err)
		}
		if err := e.flushThemes(tx, scope, st); err != nil {
			return err
		}
		if err := xb.Put(scopeKey(scope), encodeScopeThemes(st)); err != nil {
			return err
		}
	}
	return nil
}

// flushThemes writes the themes the partition changed since the last
// flush, each with its summary: the fact of its most central member.
func (e *Engine) flushThemes(tx *bolt.Tx, scope string, st *scopeThemes) error {
	xb := tx.Bucket(bucketXMemory)
	for _, tid := range st.p.TakeDirty() {
		t := st.p.Theme(tid)
		if t == nil {
			if err := xb.Delete(themeKey(scope, tid)); err != nil {
				return err
			}
			continue
		}
		s := &xmemory.Stored{Theme: *t, Rep: st.p.Rep(tid)}
		v := xb.Get(factKey(s.Rep))
		if j := bytes.IndexByte(v, 0); j >= 0 {
			s.Summary = clip(string(v[j+1:]), themeSummaryRunes)
		}
		if err := xb.Put(themeKey(scope, tid), xmemory.EncodeTheme(s)); err != nil {
			return err
		}
	}
	return nil
}

// clip cuts s to at most runes runes.
func clip(s string, runes int) string {
	r := []rune(s)
	if len(r) <= runes {
		return s
	}
	return string(r[:runes])
}

// openThemes rebuilds the bucket when it was built by another version or
// other options (or not at all). A read-only store with a stale bucket
// has no themes.
func (e *Engine) openThemes() error {
	e.themes.reset()
	want := e.xmemoryVersion(e.opts.Embedder)
	if current, err := e.metaIs(metaXMemory, want); err != nil || current {
		return err
	}
	if e.opts.ReadOnly {
		e.themes.off = true
		return nil
	}
	if err := e.db.Update(func(tx *bolt.Tx) error { return e.rebuildThemes(tx, want) }); err != nil {
		e.themes.reset()
		return fmt.Errorf("hmo: themes: %w", err)
	}
	return nil
}

// rebuildThemes builds the bucket afresh from the records and their
// vectors of e.dims dimensions, in id order, and records layout.
func (e *Engine) rebuildThemes(tx *bolt.Tx, layout string) error {
	e.themes.reset()
	if _, err := freshBucket(tx, bucketXMemory); err != nil {
		return err
	}
	vs := e.storedVectors(tx)
	err := eachRecord(tx, func(k []byte, r *Record) error {
		vec, err := vs.getKey(k)
		if err != nil || r.SupersededBy != 0 {
			return nil // no vector (being re-embedded): no fact
		}
		return e.themesAdd(tx, []*Record{r}, [][]float32{vec})
	})
	if err != nil {
		return err
	}
	return tx.Bucket(bucketMeta).Put(metaXMemory, []byte(layout))
}

// Themes returns the xMemory theme of each of ids (0 for a record that is
// gone or not in scope) and each theme's centroid, for the records of
// scope. A scope of more than Options.ThemesMaxRecords records has no
// themes. It is safe for concurrent use.
func (e *Engine) Themes(scope string, ids []uint64) ([]uint64, map[uint64][]float32, error) {
	if err := e.checkOpen(); err != nil {
		return nil, nil, err
	}
	e.swapMu.RLock()
	defer e.swapMu.RUnlock()
	c := &e.themes
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]uint64, len(ids))
	cents := map[uint64][]float32{}
	if c.off {
		return out, cents, nil
	}
	var st *scopeThemes
	if err := e.db.View(func(tx *bolt.Tx) error {
		var err error
		st, err = e.loadThemes(tx, scope)
		return err
	}); err != nil {
		return nil, nil, err
	}
	for i, id := range ids {
		out[i] = st.p.ThemeOf(id)
		if t := st.p.Theme(out[i]); t != nil && cents[t.ID] == nil {
			cents[t.ID] = t.Centroid()
		}
	}
	return out, cents, nil
}

// ThemeSummaries returns the stored themes of scope with their
// summaries, by theme id; for inspection and tests.
func (e *Engine) ThemeSummaries(scope string) (map[uint64]xmemory.Stored, error) {
	if err := e.checkOpen(); err != nil {
		return nil, err
	}
	out := map[uint64]xmemory.Stored{}
	err := e.db.View(func(tx *bolt.Tx) error {
		pre := themePrefix(scope)
		cur := tx.Bucket(bucketXMemory).Cursor()
		for k, v := cur.Seek(pre); k != nil && bytes.HasPrefix(k, pre); k, v = cur.Next() {
			t, err := xmemory.DecodeTheme(v)
			if err != nil {
				return fmt.Errorf("%w: theme: %w", ErrCorrupt, err)
			}
			out[t.ID] = *t
		}
		return nil
	})
	return out, err
}

// Vectors returns the stored vectors of ids, nil for a record without one.
func (e *Engine) Vectors(ids []uint64) ([][]float32, error) {
	if err := e.checkOpen(); err != nil {
		return nil, err
	}
	e.swapMu.RLock()
	defer e.swapMu.RUnlock()
	out := make([][]float32, len(ids))
	err := e.db.View(func(tx *bolt.Tx) error {
		vs := e.storedVectors(tx)
		for i, id := range ids {
			if v, err := vs.get(id); err == nil {
				out[i] = v
			}
		}
		return nil
	})
	return out, err
}
