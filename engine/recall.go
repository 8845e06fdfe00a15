package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/internal/vecscan"
	"github.com/hmo-dev/hmo/retrieve"
)

// Query is a recall request. Zero filter fields do not filter.
type Query struct {
	Text    string
	K       int       // results wanted; 0 means DefaultK
	Scope   string    // only records of this scope
	Session string    // only records of this session
	From    time.Time // event time, inclusive
	To      time.Time // event time, exclusive
	// NoAccess leaves the results uncounted: the caller shows only some
	// of them and counts those with Engine.Access. The query itself is
	// still counted in the tier statistics.
	NoAccess bool

	null nullStats // the query's similarity to unrelated records, set by Recall
	// judged caches judges(Text) for the text it was computed for: the
	// walk asks the score test's bound several times per query.
	judged *judgement
	// topics are retrieve.TopicWords(topicsText) (when topicsDone): the
	// query's embedding and the score test's judgement read them.
	topics     []string
	topicsText string
	topicsDone bool
	// readTx is the bbolt transaction (Tx.ID) the archive's results were
	// read in, set by recallArchive; 0 when the results came from elsewhere.
	readTx int
}

// topicWords is retrieve.TopicWords(q.Text), worked out once per text;
// the caller must not change them.
func (q *Query) topicWords() []string {
	if !q.topicsDone || q.topicsText != q.Text {
		q.topics, q.topicsText, q.topicsDone = retrieve.TopicWords(q.Text), q.Text, true
	}
	return q.topics
}

// Result is one recalled record with its provenance.
type Result struct {
	Record      Record  `json:"record"`
	Score       float64 `json:"score"`        // fused score, higher is better
	TextScore   float64 `json:"text_score"`   // BM25; 0 when the text index did not return it
	VectorScore float64 `json:"vector_score"` // cosine; 0 when the vector index did not return it
	// Coverage is the IDF-weighted share of the query's terms the record
	// contains (TextHit.Coverage); computed for tier-served results only.
	Coverage float64 `json:"coverage,omitempty"`
	// Relevance is the calibrated relevance on [0, 1]
	// (retrieve.Relevance): unlike Score it means the same across
	// queries and store sizes, so a threshold on it drops the unrelated.
	Relevance float64 `json:"relevance"`
	// VectorZ is VectorScore in standard deviations above the query's
	// similarity to unrelated records of the store; 0 without a vector.
	VectorZ float64 `json:"vector_z,omitempty"`
	// SoftMatch is the mean best word-vector match of the query's
	// content words with the record's own words, on [0, 1]
	// (retrieve.Candidate.SoftMatch).
	SoftMatch float64 `json:"soft_match,omitempty"`
	Tier      uint8   `json:"tier"` // the tier that served it: 1 or 2 (the view holding it) or 3 (the archive)
}

func (q *Query) validate() error {
	if !utf8.ValidString(q.Text) {
		return fmt.Errorf("%w: %w", ErrInvalidQuery, ErrInvalidUTF8)
	}
	if strings.TrimSpace(q.Text) == "" {
		return fmt.Errorf("%w: %w", ErrInvalidQuery, ErrEmptyText)
	}
	if q.K < 0 || q.K > DefaultMaxK {
		return fmt.Errorf("%w: k=%d outside [1, %d]", ErrInvalidQuery, q.K, DefaultMaxK)
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		return fmt.Errorf("%w: empty time range", ErrInvalidQuery)
	}
	if q.K == 0 {
		q.K = DefaultK
	}
	return nil
}

func (q *Query) filtered() bool {
	return q.Scope != "" || q.Session != "" || !q.From.IsZero() || !q.To.IsZero()
}

func (q *Query) match(r *Record) bool {
	return (q.Scope == "" || r.Scope == q.Scope) &&
		(q.Session == "" || r.Session == q.Session) &&
		(q.From.IsZero() || !r.Time.Before(q.From)) &&
		(q.To.IsZero() || r.Time.Before(q.To))
}

// Recall returns up to q.K records ranked by hybrid lexical and vector
// relevance, best first. In tiered mode it walks the tiers and counts
// every returned record as accessed, after the reply: the results'
// headers are the records' as the recall found them, and Get shows them
// counted. In flat mode it searches the archive.
func (e *Engine) Recall(ctx context.Context, q Query) ([]Result, error) {
	if err := e.checkOpen(); err != nil {
		return nil, err
	}
	if err := q.validate(); err != nil {
		return nil, err
	}
	e.swapMu.RLock() // Reindex switches the embedder and vector index
	defer e.swapMu.RUnlock()
	if e.tiers != nil {
		return e.recallTiered(ctx, &q)
	}
	var qv []float32
	if !e.opts.NoVector {
		var err error
		if qv, err = e.embedQuery(ctx, &q); err != nil {
			if e.opts.NoText || !modelDown(err) {
				return nil, err
			}
			// The embedder's server is down: answer from the full-text
			// index alone rather than not at all.
			return e.recallLexical(ctx, &q)
		}
		q.null = e.vectorNull(qv)
	}
	return e.recallArchive(ctx, &q, qv)
}

// modelDown reports whether err says a model server cannot embed now.
func modelDown(err error) bool {
	return errors.Is(err, ErrModelUnavailable) || errors.Is(err, ErrModelNotFound)
}

// recallLexical is recall from the full-text index alone.
func (e *Engine) recallLexical(ctx context.Context, q *Query) ([]Result, error) {
	return e.recallArchive(ctx, q, nil)
}

// recallArchive is the exhaustive search of every record: the retrieval
// pipeline over the archive's indexes. A nil qv leaves the vector stage
// out.
func (e *Engine) recallArchive(ctx context.Context, q *Query, qv []float32) ([]Result, error) {
	rq := e.pipeQuery(q, qv)
	// The results' records are read while the pipeline works out their
	// soft match.
	var recs []listed
	var tx int
	var readErr error
	cands, err := e.pipe.RunBeside(ctx, rq, &archiveSource{e: e, q: q}, func(ids []uint64) {
		recs, tx, readErr = e.resultRecords(ids, q.K)
	})
	if err != nil {
		return nil, err
	}
	q.readTx = tx
	return archiveResults(cands, recs), readErr
}

// pipeQuery is what the pipeline needs of q.
func (e *Engine) pipeQuery(q *Query, qv []float32) *retrieve.Query {
	rq := &retrieve.Query{}
	if j := q.judged; j != nil && j.text == q.Text {
		*rq = j.rq // what the score test worked out of the text (judges)
	}
	rq.Text, rq.Vector, rq.K, rq.Candidates, rq.Now = q.Text, qv, q.K, max(e.opts.Candidates, q.K), e.opts.Clock()
	rq.VectorNull = retrieve.Null{Mean: q.null.mean, SD: q.null.sd}
	return rq
}

// archiveSource serves the pipeline from the archive's indexes and bbolt.
type archiveSource struct {
	e *Engine
	q *Query
}

func (s *archiveSource) Text(ctx context.Context, rq *retrieve.Query, c int) ([]retrieve.Hit, error) {
	q := *s.q
	q.Text = rq.Text // the pipeline may expand the question
	var pool *TextPool
	if len(rq.TextPool) > 0 && rq.TextPostings > 0 {
		// The pool is the first pass's lexical candidates, whose docs
		// the priors read next: they are read beside the search, on the
		// core it leaves idle. An index that scores the pool from its
		// postings does not ask for its documents; one that counts them
		// does. As the last pool went, the records alone are read (into
		// the doc cache), or the documents as the index was given them
		// (textDocs: each record, cached, and its context turns, mostly
		// on the same page), handed to the index when it asks: read in
		// another transaction, the context turns' pages would be read
		// twice.
		var docs []TextDoc
		var docsErr error
		counted := s.e.poolCounted.Load()
		read := make(chan struct{})
		go func() {
			defer close(read)
			if counted {
				docs, docsErr = s.e.textDocs(rq.TextPool)
			} else {
				_ = s.e.warmDocs(rq.TextPool) // an error is left for Docs to report
			}
		}()
		defer func() { <-read }()
		asked := false
		pool = &TextPool{Docs: func() ([]TextDoc, error) {
			asked = true
			<-read
			if counted {
				return docs, docsErr
			}
			return s.e.textDocs(rq.TextPool)
		}, IDs: rq.TextPool, Postings: rq.TextPostings}
		defer func() { s.e.poolCounted.Store(asked) }()
	}
	t, err := s.e.textCandidates(ctx, &q, c, rq.TextFloor, pool)
	return toHits(t), err
}

func (s *archiveSource) Vector(_ context.Context, rq *retrieve.Query, c int) ([]retrieve.Hit, error) {
	v, err := s.e.vectorCandidates(rq.Vector, s.q, c)
	return toHits(v), err
}

func (s *archiveSource) Docs(ids []uint64) ([]retrieve.Doc, error) { return s.e.docs(ids) }

// Prefetch reads the docs of ids into the doc cache (retrieve.Prefetcher),
// on two cores when one is free; an error is left for Docs to report.
func (s *archiveSource) Prefetch(ids []uint64) { s.e.prefetchDocs(ids) }

func (s *archiveSource) WordVectors(words []string) ([][]float32, error) {
	return s.e.wordVectors(words)
}

func (s *archiveSource) Segments(leaves []uint64, levels int) (*retrieve.Forest, error) {
	return s.e.segments(leaves, levels)
}

// docOf is what the pipeline's priors see of a record.
func (e *Engine) docOf(r *Record) retrieve.Doc {
	d := retrieve.Doc{ID: r.ID, Prev: r.Prev, Scope: r.Scope, Session: r.Session, Speaker: r.Role, Time: r.Time, Text: r.Text}
	d.Derived = e.opts.standalone(r)
	if !d.Derived && e.opts.contextTurns() > 0 {
		// The nearest turn before r, unless a derived record sits
		// between them (contextOf steps over it; the pipeline then
		// sees a derived Context and leaves the pair alone).
		d.Context = r.Prev
	}
	return d
}

func toHits(s []scored) []retrieve.Hit {
	out := make([]retrieve.Hit, len(s))
	for i, h := range s {
		out[i] = retrieve.Hit{ID: h.id, Score: h.score, Coverage: h.cov}
	}
	return out
}

// scored is a candidate id with its raw score from one index.
type scored struct {
	id    uint64
	score float64
	cov   float64 // lexical coverage, from text indexes that compute it
}

// textCandidates searches the text index; floor is TextFilter.Floor. A
// pool goes to an index that implements PooledSearcher; others search
// every document.
func (e *Engine) textCandidates(ctx context.Context, q *Query, c int, floor float64, pool *TextPool) ([]scored, error) {
	// The archive's results carry no coverage (Result.Coverage).
	f := TextFilter{Scope: q.Scope, Session: q.Session, From: q.From, To: q.To, Floor: floor, NoCoverage: true}
	var hits []TextHit
	var err error
	if ps, ok := e.text.(PooledSearcher); ok && pool != nil {
		hits, err = ps.SearchPool(ctx, q.Text, c, f, *pool)
	} else {
		hits, err = e.text.Search(ctx, q.Text, c, f)
	}
	if err != nil {
		return nil, fmt.Errorf("hmo: text search: %w", err)
	}
	out := make([]scored, len(hits))
	for i, h := range hits {
		out[i] = scored{id: h.ID, score: h.Score}
	}
	return out, nil
}

// textDocs are the full-text documents of the records ids that exist,
// as the text index was given them. The pool they are read for is the
// first pass's lexical candidates, whose pipeline metadata the priors
// read next: the records and context turns are read from the doc cache
// when it holds them, and the records read from the store fill it, so
// that the priors do not read them again.
//
// From parallelTextDocs ids on, the two halves are read at once, each in
// its own transaction: the pool is read between the first pass and the
// ranking, while one core waits.
func (e *Engine) textDocs(ids []uint64) ([]TextDoc, error) {
	if len(ids) < parallelTextDocs {
		return e.readTextDocs(ids)
	}
	h := len(ids) / 2
	var second []TextDoc
	var err2 error
	done := make(chan struct{})
	go func() {
		defer close(done)
		second, err2 = e.readTextDocs(ids[h:])
	}()
	first, err1 := e.readTextDocs(ids[:h])
	<-done
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	return append(first, second...), nil
}

// parallelTextDocs is the number of ids from which textDocs reads on two
// goroutines.
const parallelTextDocs = 32

// readTextDocs is textDocs in one transaction.
func (e *Engine) readTextDocs(ids []uint64) ([]TextDoc, error) {
	out := make([]TextDoc, 0, len(ids))
	gen := e.docCache.generation()
	err := e.db.View(func(tx *bolt.Tx) error {
		recs := e.db.preadBucket(tx, bucketRecords)
		defer releaseBucket(recs)
		// Their context turns are mostly on the same pages.
		whenCold(recs, func() { willNeed(recs, ids) })
		cached := e.cachedRecordFrom(recs)
		for _, id := range ids {
			var r Record
			if d, ok := e.docCache.get(id); ok {
				r = docRecord(&d)
			} else {
				var err error
				r, err = getRecordFrom(recs, id)
				if errors.Is(err, ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				e.cacheDoc(&r, gen)
			}
			out = append(out, e.textDocVia(tx, &r, cached))
		}
		return nil
	})
	return out, err
}

// cachedRecordFrom returns record with what a text document reads of it
// (its text, role, labels, time and previous turn) from the doc cache
// when the cache holds it, and the rest read through recs.
func (e *Engine) cachedRecordFrom(recs kvGetter) func(*bolt.Tx, uint64) (Record, error) {
	return func(_ *bolt.Tx, id uint64) (Record, error) {
		if d, ok := e.docCache.get(id); ok {
			return docRecord(&d), nil
		}
		return e.freshRecord(recs, id)
	}
}

// docRecord is the part of a record its pipeline doc (docOf) holds: what
// the text index's document of it reads.
func docRecord(d *retrieve.Doc) Record {
	return Record{ID: d.ID, Prev: d.Prev, Scope: d.Scope, Session: d.Session, Role: d.Speaker, Time: d.Time, Text: d.Text}
}

func (e *Engine) vectorCandidates(qv []float32, q *Query, c int) ([]scored, error) {
	if !q.filtered() {
		return e.searchVector(qv, c)
	}
	vi, err := e.vectorIndex()
	if err != nil {
		return nil, err
	}
	if fi, ok := vi.(FilteredVectorIndex); ok {
		// The index filters while it scans: exact, k hits whatever the
		// filter's selectivity. Labels match by hash there; the records
		// confirm them.
		f := VectorFilter{Scope: q.Scope, Session: q.Session, From: q.From, To: q.To}
		hits, err := e.searchIndex(vi, qv, c, func(n int) ([]VectorHit, error) { return fi.SearchFilter(qv, n, f) })
		if err != nil {
			return nil, fmt.Errorf("hmo: vector search: %w", err)
		}
		return e.keepMatching(toScored(hits), q, c)
	}
	hits, err := e.searchVector(qv, 4*c)
	if err != nil {
		return nil, err
	}
	out, err := e.keepMatching(hits, q, c)
	if err != nil || len(out) >= c || len(hits) < 4*c {
		return out, err
	}
	return e.exactVector(qv, q, c)
}

func (e *Engine) searchVector(qv []float32, c int) ([]scored, error) {
	vi, err := e.vectorIndex()
	if err != nil {
		return nil, err
	}
	hits, err := e.searchIndex(vi, qv, c, func(n int) ([]VectorHit, error) { return vi.Search(qv, n) })
	if err != nil {
		return nil, fmt.Errorf("hmo: vector search: %w", err)
	}
	return toScored(hits), nil
}

func toScored(hits []VectorHit) []scored {
	out := make([]scored, len(hits))
	for i, h := range hits {
		out[i] = scored{id: h.ID, score: float64(h.Score)}
	}
	return out
}

// keepMatching drops candidates that fail the query's filters. It reads
// the records' metadata through the pipeline's cache.
func (e *Engine) keepMatching(hits []scored, q *Query, c int) ([]scored, error) {
	ids := make([]uint64, len(hits))
	for i, h := range hits {
		ids[i] = h.id
	}
	docs, err := e.docs(ids)
	if err != nil {
		return nil, err
	}
	var out []scored
	for i, h := range hits {
		d := &docs[i]
		if d.ID == 0 {
			continue // forgotten since the index answered
		}
		r := Record{Scope: d.Scope, Session: d.Session, Time: d.Time}
		if q.match(&r) {
			out = append(out, h)
		}
		if len(out) == c {
			break
		}
	}
	return out, nil
}

// exactVector scans every stored vector of the records that match the
// query's filters; used when the filters are too selective for an index
// that cannot filter while it searches.
func (e *Engine) exactVector(qv []float32, q *Query, c int) ([]scored, error) {
	top := newTopK(c)
	err := e.db.View(func(tx *bolt.Tx) error {
		vs := e.storedVectors(tx)
		return tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
			r, err := decodeRecord(v)
			if err != nil || !q.match(&r) {
				return nil
			}
			vec, err := vs.getKey(k)
			if err != nil {
				return nil
			}
			top.push(scored{id: keyU64(k), score: float64(dot(qv, vec))})
			return nil
		})
	})
	return top.sorted(), err
}

// dot is the inner product of two vectors, through the SIMD kernel every
// similarity in hmo uses.
func dot(a, b []float32) float32 { return vecscan.Dot(a, b) }

// results loads the top k candidates, and returns the id of the bbolt
// transaction they were read in (Tx.ID: the last commit it saw).
func (e *Engine) results(fused []retrieve.Candidate, k int) ([]Result, int, error) {
	ids := make([]uint64, len(fused))
	for i := range fused {
		ids[i] = fused[i].ID
	}
	recs, tx, err := e.resultRecords(ids, k)
	return archiveResults(fused, recs), tx, err
}

// archiveResults are the archive's results of the records recs read
// from the ranked list fused.
func archiveResults(fused []retrieve.Candidate, recs []listed) []Result {
	out := make([]Result, len(recs))
	for i, r := range recs {
		f := &fused[r.at]
		out[i] = Result{Record: r.rec, Score: f.Score, TextScore: f.Text, VectorScore: f.Vector,
			Relevance: f.Relevance, VectorZ: f.VectorZ, SoftMatch: f.SoftMatch, Tier: TierArchive}
	}
	return out
}

// listed is a result's record and its place in the ranked list.
type listed struct {
	rec Record
	at  int
}

// resultRecords reads the records of the first k of ids that still
// exist, and returns them with their places in ids and the id of the
// bbolt transaction they were read in (Tx.ID: the last commit it saw).
func (e *Engine) resultRecords(ids []uint64, k int) ([]listed, int, error) {
	out := make([]listed, 0, min(k, len(ids)))
	var txID int
	err := e.db.View(func(tx *bolt.Tx) error {
		txID = tx.ID()
		recs := e.db.preadBucket(tx, bucketRecords)
		defer releaseBucket(recs)
		for i, id := range ids {
			if len(out) == k {
				break
			}
			r, err := getRecordFrom(recs, id)
			if err != nil {
				continue // forgotten since the index answered
			}
			out = append(out, listed{rec: r, at: i})
		}
		return nil
	})
	return out, txID, err
}
