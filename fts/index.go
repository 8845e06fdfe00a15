package fts

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/hmo-dev/hmo/engine"
)

var _ engine.TextIndex = (*Index)(nil)

// Keys of the values kept in the index beside the documents, written as
// scorch internal values.
var (
	keyWatermark = []byte("hmo_watermark") // big-endian uint64
	keySchema    = []byte("hmo_schema")    // schemaValue of the settings
	// keyMaxID bounds the ids of the documents the index holds: a
	// big-endian uint64 no indexed id exceeds, then the watermark it was
	// written with (another big-endian uint64), written with every Apply
	// (zeros when the index is created). Apply looks up the stored
	// lengths of a document it adds only when its id is not above it.
	// Indexes written before it was kept have none, and a bound whose
	// watermark is not the index's was left behind by a build that did
	// not keep it: Apply looks every document up in them.
	keyMaxID = []byte("hmo_maxid")
)

// Index is a BM25 full-text index of records in one directory, backed by a
// bleve scorch index.
//
// An Index is safe for concurrent use. Apply calls are serialised; Search
// runs concurrently with Apply and sees each batch entirely or not at all.
type Index struct {
	s        *scorch.Scorch       // safe for concurrent use; closed under life's write lock
	queue    *index.AnalysisQueue // scorch's analysis workers, owned by the Index
	an       analyzers            // document analysis
	pool     analyzers            // an with its stems cached, for a pooled search's documents and the queries
	counter  *termCounter         // pool's text analysis as counts, nil when it has none
	scoring  Scoring
	postings *postingsCache // decoded postings of the text search (postings.go)
	ids      docIDCache     // record ids of the documents searches returned (docids.go)
	counts   termCounts     // live postings of words whose lists are not decoded (termcounts.go)
	locs     hitLocs        // where searches found their hits, for a pooled search (hitlocs.go)
	passes   firstPasses    // the last searches' hits scored, for a pooled search of their pool (firstpass.go)
	// poolDecoded is the bytes of postings pooled searches decoded
	// (scoreLocated), as poolPostingBytes a posting.
	poolDecoded atomic.Int64
	dir         string
	readOnly    bool // Options.ReadOnly: Apply fails

	applyMu sync.Mutex // serialises Apply so that batches land in call order
	// maxID is keyMaxID's value when maxKnown: no document above it is
	// indexed. Both are guarded by applyMu.
	maxID    uint64
	maxKnown bool
	lookups  atomic.Uint64 // documents Apply looked up in the index

	async   bool          // Options.AsyncPersist
	applied atomic.Uint64 // watermark of the last Apply
	durable atomic.Uint64 // highest watermark known to be on disk

	closeMu sync.Mutex   // serialises Close
	closed  atomic.Bool  // set by Close
	life    sync.RWMutex // read-held by every use of s; Close write-holds it to close s
}

// Open opens the index in dir, creating it (and dir, mode 0700) when dir
// does not exist or is empty. A nil opts means defaults.
//
// A directory that holds no readable index fails with an error wrapping
// ErrCorrupt, an index built with other options with ErrIncompatible: in
// both cases the caller removes dir and rebuilds the index from the source
// of truth. An index held open by another process fails with ErrLocked
// after Options.LockTimeout.
func Open(dir string, opts *Options) (x *Index, err error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	an, err := newAnalyzers(o.Analyzer)
	if err != nil {
		return nil, err
	}
	exists, err := hasIndex(dir)
	if err != nil {
		return nil, err
	}
	q := index.NewAnalysisQueue(analysisWorkers)
	var s *scorch.Scorch
	defer func() {
		if r := recover(); r != nil {
			x, err = nil, fmt.Errorf("fts: open %s: %w: panic: %v", dir, ErrCorrupt, r)
		}
		if err != nil { // release what was opened
			if s != nil {
				_ = s.Close()
			}
			q.Close()
		}
	}()
	switch {
	case exists:
		s, err = openIndex(dir, o, q)
	case o.ReadOnly:
		err = fmt.Errorf("fts: open %s: %w (no index, and read-only)", dir, ErrCorrupt)
	default:
		s, err = createIndex(dir, o, q)
	}
	if err != nil {
		return nil, err
	}
	pool := analyzers{text: cacheStems(an.text), keyword: an.keyword}
	x = &Index{s: s, queue: q, an: an, pool: pool, counter: newTermCounter(pool.text), dir: dir, scoring: o.Scoring, postings: newPostingsCache(o.PostingsCache), async: o.AsyncPersist && !o.ReadOnly, readOnly: o.ReadOnly}
	if err := x.check(o); err != nil {
		return nil, err
	}
	wm, err := x.watermark()
	if err != nil {
		return nil, err
	}
	x.applied.Store(wm)
	x.durable.Store(wm)
	if x.maxID, x.maxKnown, err = x.storedMaxID(wm); err != nil {
		return nil, err
	}
	return x, nil
}

// storedMaxID reads keyMaxID: false when the index has none, or one
// written at another watermark than wm, the index's.
func (x *Index) storedMaxID(wm uint64) (uint64, bool, error) {
	v, err := x.getInternal(keyMaxID)
	if err != nil {
		return 0, false, x.wrap("open", err)
	}
	switch len(v) {
	case 0, 8: // none, or the first layout, which had no watermark
		return 0, false, nil
	case 16:
		if binary.BigEndian.Uint64(v[8:]) != wm {
			return 0, false, nil
		}
		return binary.BigEndian.Uint64(v), true, nil
	}
	return 0, false, fmt.Errorf("fts: open %s: %w (max id of %d bytes)", x.dir, ErrCorrupt, len(v))
}

// hasIndex reports whether dir holds an index, and fails with ErrCorrupt
// when it holds something else.
func hasIndex(dir string) (bool, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("fts: open %s: %w (%w)", dir, ErrCorrupt, err)
	case !fi.IsDir():
		return false, fmt.Errorf("fts: open %s: %w (not a directory)", dir, ErrCorrupt)
	}
	_, err = os.Stat(filepath.Join(dir, metaFile))
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("fts: open %s: %w (%w)", dir, ErrCorrupt, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("fts: open %s: %w (%w)", dir, ErrCorrupt, err)
	}
	if len(entries) > 0 {
		return false, fmt.Errorf("fts: open %s: %w (no %s)", dir, ErrCorrupt, metaFile)
	}
	return false, nil
}

// schemaValue identifies the layout and analysis of an index built with o.
func schemaValue(o Options) string {
	return "hmo-fts/3 analyzer=" + string(o.Analyzer)
}

// check verifies that an opened index was built by this package with the
// options o.
func (x *Index) check(o Options) error {
	got, err := x.getInternal(keySchema)
	if err != nil {
		return fmt.Errorf("fts: open %s: %w (%w)", x.dir, ErrCorrupt, err)
	}
	switch want := schemaValue(o); {
	case got == nil:
		return fmt.Errorf("fts: open %s: %w (no schema)", x.dir, ErrCorrupt)
	case string(got) != want:
		return fmt.Errorf("fts: open %s: %w: have %q, want %q", x.dir, ErrIncompatible, got, want)
	}
	if _, err := x.watermark(); err != nil {
		return err
	}
	if !o.SkipVerify {
		return x.verify()
	}
	return nil
}

// Watermark returns the watermark recorded by the last Apply, 0 for a new
// index.
func (x *Index) Watermark() (uint64, error) {
	x.life.RLock()
	defer x.life.RUnlock()
	if x.closed.Load() {
		return 0, fmt.Errorf("fts: watermark: %w", ErrClosed)
	}
	return x.watermark()
}

func (x *Index) watermark() (uint64, error) {
	v, err := x.getInternal(keyWatermark)
	if err != nil {
		return 0, x.wrap("watermark", err)
	}
	switch len(v) {
	case 0:
		return 0, nil
	case 8:
		return binary.BigEndian.Uint64(v), nil
	}
	return 0, fmt.Errorf("fts: watermark: %w (%d bytes)", ErrCorrupt, len(v))
}

// DurableWatermark returns the highest watermark whose batch is known to
// be on disk: after a crash the index holds at least the batches up to
// it. Without Options.AsyncPersist it is Watermark.
func (x *Index) DurableWatermark() (uint64, error) {
	if !x.async {
		return x.Watermark()
	}
	return x.durable.Load(), nil
}

// persisted is the callback of a batch carrying watermark wm.
func (x *Index) persisted(wm uint64) func(error) {
	return func(err error) {
		if err != nil {
			return
		}
		for {
			cur := x.durable.Load()
			if wm <= cur || x.durable.CompareAndSwap(cur, wm) {
				return
			}
		}
	}
}

// closeWait bounds how long Close waits for bleve's persister to write
// the batches applied asynchronously; what it has not written by then is
// replayed by the caller's log after the next Open.
const closeWait = 30 * time.Second

// waitPersisted waits until every applied batch is on disk, or closeWait.
func (x *Index) waitPersisted() {
	deadline := time.Now().Add(closeWait)
	for x.durable.Load() < x.applied.Load() && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
}

// DocCount returns the number of documents in the index.
func (x *Index) DocCount() (n uint64, err error) {
	x.life.RLock()
	defer x.life.RUnlock()
	if x.closed.Load() {
		return 0, fmt.Errorf("fts: count: %w", ErrClosed)
	}
	r, err := x.s.Reader()
	if err != nil {
		return 0, x.wrap("count", err)
	}
	defer closeReader(r, &err)
	if n, err = r.DocCount(); err != nil {
		return 0, x.wrap("count", err)
	}
	return n, nil
}

// getInternal reads an internal value from the current snapshot. The
// caller holds life or applyMu (Close waits for both), or has not
// returned x from Open yet.
func (x *Index) getInternal(key []byte) (v []byte, err error) {
	r, err := x.s.Reader()
	if err != nil {
		return nil, err
	}
	defer closeReader(r, &err)
	return r.GetInternal(key)
}

// closeReader closes r, reporting its error through err if err is nil.
func closeReader(r index.IndexReader, err *error) {
	if cerr := r.Close(); *err == nil && cerr != nil {
		*err = cerr
	}
}

// Close releases the index. Closing a closed Index does nothing.
func (x *Index) Close() error {
	x.closeMu.Lock()
	defer x.closeMu.Unlock()
	if x.closed.Load() {
		return nil
	}
	x.closed.Store(true)
	x.applyMu.Lock() // no Apply in flight, and none after: closed is set
	if x.async {
		x.waitPersisted()
	}
	x.applyMu.Unlock()
	x.life.Lock() // no search in flight
	defer x.life.Unlock()
	err := x.s.Close()
	x.queue.Close()
	x.postings.close()
	if err != nil {
		return fmt.Errorf("fts: close %s: %w", x.dir, err)
	}
	return nil
}

// wrap adds context to an error from bleve.
func (x *Index) wrap(op string, err error) error {
	return &opError{op: op, err: err}
}

// opError is an error of an operation of an Index: "fts: op: " and the
// error, whose own "fts: " it drops (the sentinels and the errors made
// below carry it), so that a message has one prefix.
type opError struct {
	op  string
	err error
}

func (e *opError) Error() string {
	msg := e.err.Error()
	return "fts: " + e.op + ": " + strings.TrimPrefix(msg, "fts: ")
}

func (e *opError) Unwrap() error { return e.err }

// docID is the bleve document id of a record id.
func docID(id uint64) string { return strconv.FormatUint(id, 10) }
