package engine

import (
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/internal/pair"
	"github.com/hmo-dev/hmo/retrieve"
)

// docCacheCap bounds the records' metadata kept for the retrieval
// pipeline's priors (speaker, session, time, text), in records. An
// analysed record costs about 600 bytes of heap, so 16,384 of them about
// 10 MB: a conversation's turns, or the candidates of about 60 queries
// over a 100K archive (some 276 each). At 65,536 the cache made up most
// of a querying process's anonymous memory at 100K (77 against 48 MB
// after 300 queries) and saved no CPU (BENCHMARKS.md, "Cold start and
// memory at 100K").
const docCacheCap = 1 << 14

// docCache keeps the pipeline's view of recently ranked records, so the
// priors do not decode the same records from bbolt on every query.
// Records never change in place; Forget and Update drop their entries
// after their commit. A reader whose transaction began before that commit
// may still read the old record: it takes the cache's generation before
// its transaction, and put keeps the record only if no drop came since,
// so that a forgotten record's text never comes back into the cache.
// Safe for concurrent use.
type docCache struct {
	mu  sync.Mutex // guards m and gen
	m   map[uint64]retrieve.Doc
	gen uint64 // drops so far
}

func (c *docCache) get(id uint64) (retrieve.Doc, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[id]
	return d, ok
}

// getAll sets out[i] to the cached doc of ids[i], under one lock, and
// returns the places of the ids it does not hold.
func (c *docCache) getAll(ids []uint64, out []retrieve.Doc) (missing []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, id := range ids {
		if d, ok := c.m[id]; ok {
			out[i] = d
		} else {
			missing = append(missing, i)
		}
	}
	return missing
}

// missing returns the ids, of ids, that c does not hold, under one lock.
func (c *docCache) missing(ids []uint64) []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []uint64
	for _, id := range ids {
		if _, ok := c.m[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

// generation is the number of drops so far; take it before opening the
// transaction that reads the records to put.
func (c *docCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put caches d, read in a transaction begun at generation gen, unless a
// drop came since.
func (c *docCache) put(d retrieve.Doc, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	switch {
	case c.m == nil:
		c.m = make(map[uint64]retrieve.Doc, 1024)
	case len(c.m) >= docCacheCap:
		// Start over (cheaper than tracking recency) in the same map:
		// cleared, it keeps its room for docCacheCap entries, where a
		// new map would be grown again, table by table, every
		// docCacheCap records read.
		clear(c.m)
	}
	c.m[d.ID] = d
}

func (c *docCache) drop(ids ...uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, id := range ids {
		delete(c.m, id)
	}
}

// warmDocs reads the docs of ids that the cache does not hold into it,
// as docs does, for a caller that wants them cached and not returned (a
// read ahead): it builds no list of them.
func (e *Engine) warmDocs(ids []uint64) error {
	return e.readDocs(e.docCache.missing(ids))
}

// readDocs reads the docs of ids into the cache, in one transaction.
func (e *Engine) readDocs(missing []uint64) error {
	if len(missing) == 0 {
		return nil
	}
	gen := e.docCache.generation()
	return e.db.View(func(tx *bolt.Tx) error {
		recs := e.db.preadBucket(tx, bucketRecords)
		defer releaseBucket(recs)
		whenCold(recs, func() { willNeed(recs, missing) })
		for _, id := range missing {
			if r, err := getRecordFrom(recs, id); err == nil {
				e.cacheDoc(&r, gen)
			}
		}
		return nil
	})
}

// prefetchDocs is warmDocs on the calling goroutine and, from
// parallelPrefetch ids missing, one more, each in its own transaction,
// each taking the next prefetchChunk of the ids that neither has taken:
// the second takes a share only when it runs, on a core the query
// leaves idle (the vector candidates' docs are read when their search
// is done, and the lexical one mostly is); when none is free it starts
// once the caller waits for it, finds none left, and opens no
// transaction. An error is left for Docs to report, as warmDocs's.
func (e *Engine) prefetchDocs(ids []uint64) {
	missing := e.docCache.missing(ids)
	if len(missing) < parallelPrefetch {
		_ = e.readDocs(missing)
		return
	}
	var next atomic.Int64
	n := int64(len(missing))
	read := func() {
		if next.Load() >= n {
			return
		}
		gen := e.docCache.generation()
		_ = e.db.View(func(tx *bolt.Tx) error {
			recs := e.db.preadBucket(tx, bucketRecords)
			defer releaseBucket(recs)
			for {
				lo := next.Add(prefetchChunk) - prefetchChunk
				if lo >= n {
					return nil
				}
				for _, id := range missing[lo:min(lo+prefetchChunk, n)] {
					if r, err := getRecordFrom(recs, id); err == nil {
						e.cacheDoc(&r, gen)
					}
				}
			}
		})
	}
	pair.Run(read)
}

// parallelPrefetch is the number of docs missing from which
// prefetchDocs reads on two goroutines; prefetchChunk is how many ids
// each takes at a time.
const (
	parallelPrefetch = 32
	prefetchChunk    = 8
)

// docs returns the pipeline's metadata of ids, in order, from the cache
// or bbolt; a record that is gone has a zero Doc.
func (e *Engine) docs(ids []uint64) ([]retrieve.Doc, error) {
	out := make([]retrieve.Doc, len(ids))
	missing := e.docCache.getAll(ids, out)
	if len(missing) == 0 {
		return out, nil
	}
	gen := e.docCache.generation()
	err := e.db.View(func(tx *bolt.Tx) error {
		recs := e.db.preadBucket(tx, bucketRecords)
		defer releaseBucket(recs)
		whenCold(recs, func() {
			rest := make([]uint64, len(missing))
			for j, i := range missing {
				rest[j] = ids[i]
			}
			willNeed(recs, rest)
		})
		for _, i := range missing {
			if r, err := getRecordFrom(recs, ids[i]); err == nil {
				out[i] = e.cacheDoc(&r, gen)
			}
		}
		return nil
	})
	return out, err
}

// cacheDoc builds the pipeline's metadata of r, with what the stages
// derive from its text analysed once (retrieve.Doc.Analyse), and caches
// it unless a record was dropped since generation gen, taken before r
// was read (docCache.put).
func (e *Engine) cacheDoc(r *Record, gen uint64) retrieve.Doc {
	d := e.docOf(r)
	d.Analyse()
	e.docCache.put(d, gen)
	return d
}
