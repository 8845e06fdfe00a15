package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/internal/vecscan"
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
	Tier     uint8   `json:"tier"` // the tier that served it: 1 or 2 (the view holding it) or 3 (the archive)
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
// every returned record as accessed; in flat mode it searches the archive.
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
		if qv, err = e.embedQuery(ctx, q.Text); err != nil {
			if e.opts.NoText || !modelDown(err) {
				return nil, err
			}
			// The embedder's server is down: answer from the full-text
			// index alone rather than not at all.
			return e.recallLexical(ctx, &q)
		}
	}
	return e.recallArchive(ctx, &q, qv)
}

// modelDown reports whether err says a model server cannot embed now.
func modelDown(err error) bool {
	return errors.Is(err, ErrModelUnavailable) || errors.Is(err, ErrModelNotFound)
}

// recallLexical is recall from the full-text index alone.
func (e *Engine) recallLexical(ctx context.Context, q *Query) ([]Result, error) {
	text, err := e.textCandidates(ctx, q, max(e.opts.Candidates, q.K))
	if err != nil {
		return nil, err
	}
	return e.results(e.fuse(text, nil), q.K)
}

// recallArchive is the exhaustive hybrid search of every record.
func (e *Engine) recallArchive(ctx context.Context, q *Query, qv []float32) ([]Result, error) {
	c := max(e.opts.Candidates, q.K)
	var text, vec []scored
	var textErr, vecErr error
	var wg sync.WaitGroup
	if !e.opts.NoText {
		// The two searches are independent: run the lexical one
		// alongside the vector one.
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, textErr = e.textCandidates(ctx, q, c)
		}()
	}
	if !e.opts.NoVector {
		vec, vecErr = e.vectorCandidates(qv, q, c)
	}
	wg.Wait()
	if err := errors.Join(textErr, vecErr); err != nil {
		return nil, err
	}
	return e.results(e.fuse(text, vec), q.K)
}

// scored is a candidate id with its raw score from one index.
type scored struct {
	id    uint64
	score float64
	cov   float64 // lexical coverage, from text indexes that compute it
}

func (e *Engine) textCandidates(ctx context.Context, q *Query, c int) ([]scored, error) {
	hits, err := e.text.Search(ctx, q.Text, c, TextFilter{Scope: q.Scope, Session: q.Session, From: q.From, To: q.To})
	if err != nil {
		return nil, fmt.Errorf("hmo: text search: %w", err)
	}
	out := make([]scored, len(hits))
	for i, h := range hits {
		out[i] = scored{id: h.ID, score: h.Score}
	}
	return out, nil
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
		hits, err := fi.SearchFilter(qv, c, VectorFilter{Scope: q.Scope, Session: q.Session, From: q.From, To: q.To})
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
	hits, err := vi.Search(qv, c)
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

// keepMatching drops candidates that fail the query's filters.
func (e *Engine) keepMatching(hits []scored, q *Query, c int) ([]scored, error) {
	var out []scored
	err := e.db.View(func(tx *bolt.Tx) error {
		for _, h := range hits {
			r, err := getRecord(tx, h.id)
			if err != nil {
				continue // forgotten since the index answered
			}
			if q.match(&r) {
				out = append(out, h)
			}
			if len(out) == c {
				break
			}
		}
		return nil
	})
	return out, err
}

// exactVector scans every stored vector of the records that match the
// query's filters; used when the filters are too selective for an index
// that cannot filter while it searches.
func (e *Engine) exactVector(qv []float32, q *Query, c int) ([]scored, error) {
	top := newTopK(c)
	err := e.db.View(func(tx *bolt.Tx) error {
		vb := tx.Bucket(bucketVectors)
		return tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
			r, err := decodeRecord(v)
			if err != nil || !q.match(&r) {
				return nil
			}
			vec, err := decodeVector(vb.Get(k), e.dims)
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

// results loads the top k fused candidates.
func (e *Engine) results(fused []fusedHit, k int) ([]Result, error) {
	out := make([]Result, 0, min(k, len(fused)))
	err := e.db.View(func(tx *bolt.Tx) error {
		for _, f := range fused {
			if len(out) == k {
				break
			}
			r, err := getRecord(tx, f.id)
			if err != nil {
				continue // forgotten since the index answered
			}
			out = append(out, Result{Record: r, Score: f.score, TextScore: f.text, VectorScore: f.vec, Tier: TierArchive})
		}
		return nil
	})
	return out, err
}
