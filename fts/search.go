package fts

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/blevesearch/bleve/v2/numeric"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/hmo-dev/hmo/engine"
)

// Search returns up to k ids of documents matching any word of q, best
// BM25F score first (see Scoring), restricted by f. A query with no
// indexable words (empty, punctuation, or only stop words for an analyzer
// that drops them) returns no hits and no error. k <= 0 fails with
// ErrInvalidK. Search stops early with ctx's error when ctx is done.
//
// The top k are found by MaxScore or by accumulating sums over each
// segment's postings (topK) and scored with the statistics of one snapshot of the index. Equal scores
// are ordered by id. A positive f.Floor lets the search skip documents
// below it from the start; when fewer than k documents reach it, the
// search runs again without it, so the floor never changes the result.
func (x *Index) Search(ctx context.Context, q string, k int, f engine.TextFilter) (hits []engine.TextHit, err error) {
	return x.search(ctx, "search", q, k, f, nil)
}

var _ engine.PooledSearcher = (*Index)(nil)

// SearchPool is Search while the words of q have at most p.Postings
// postings in the scored fields together. Beyond that it scores only the
// documents p.Docs returns, with the statistics Search would use, and
// returns the k best of those f passes: its cost is then the pool's, not
// the index's. A pool document is scored as Apply was given it; p.Docs
// is called only then. p.Postings <= 0 or a nil p.Docs fails with
// ErrInvalidOption.
func (x *Index) SearchPool(ctx context.Context, q string, k int, f engine.TextFilter, p engine.TextPool) (hits []engine.TextHit, err error) {
	if p.Postings <= 0 || p.Docs == nil {
		return nil, fmt.Errorf("%w: pool of %d postings (docs %t)", ErrInvalidOption, p.Postings, p.Docs != nil)
	}
	return x.search(ctx, "search pool", q, k, f, &p)
}

// search is Search, and SearchPool when p is not nil.
func (x *Index) search(ctx context.Context, op, q string, k int, f engine.TextFilter, p *engine.TextPool) (hits []engine.TextHit, err error) {
	defer recoverTo(op, &err)
	if f.NoCoverage {
		// Whatever way the hits are scored, none carries a coverage.
		defer func() {
			for i := range hits {
				hits[i].Coverage = 0
			}
		}()
	}
	if k <= 0 {
		return nil, fmt.Errorf("%w: %d", ErrInvalidK, k)
	}
	x.life.RLock()
	defer x.life.RUnlock()
	if x.closed.Load() {
		return nil, fmt.Errorf("fts: %s: %w", op, ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	terms := distinct(x.terms(q))
	if len(terms) == 0 {
		return nil, nil
	}
	r, err := x.s.Reader()
	if err != nil {
		return nil, x.wrap(op, err)
	}
	defer closeReader(r, &err)
	if f.Scope != "" {
		all, err := everyDoc(r, fieldScope, f.Scope)
		if err != nil {
			return nil, x.wrap(op, err)
		}
		if all {
			f.Scope = "" // every document passes: a filter that drops none
		}
	}
	budget := 0
	var pool []uint64
	if p != nil {
		budget, pool = p.Postings, p.IDs
	}
	hits, over, err := x.topK(ctx, r, terms, f, k, budget, pool)
	if err == nil && over != nil && over.scored {
		// Too many postings: the pool, scored from the postings.
		sortHits(over.hits)
		return over.hits[:min(k, len(over.hits))], nil
	}
	if err == nil && over != nil {
		// Too many postings: score the pool instead.
		docs, err := p.Docs()
		if err != nil {
			return nil, fmt.Errorf("fts: %s: %w", op, err)
		}
		hits = x.scoreDocs(terms, *over, docs, f)
		sortHits(hits)
		return hits[:min(k, len(hits))], nil
	}
	if err == nil && f.Floor > 0 && len(hits) < k {
		// Fewer than k documents reach the floor (the index changed
		// since it was taken): search again without it.
		f.Floor = 0
		hits, _, err = x.topK(ctx, r, terms, f, k, 0, nil)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, x.wrap(op, err)
	}
	sortHits(hits)
	return hits[:min(k, len(hits))], nil
}

// sortHits orders hits best first, equal scores by id.
func sortHits(hits []engine.TextHit) {
	slices.SortFunc(hits, func(a, b engine.TextHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// everyDoc reports whether every document of snapshot r has term v in
// field (deleted documents count in neither total).
func everyDoc(r index.IndexReader, field, v string) (bool, error) {
	n, err := r.DocCount()
	if err != nil {
		return false, err
	}
	tfr, err := r.TermFieldReader(context.Background(), []byte(v), field, false, false, false)
	if err != nil {
		return false, err
	}
	defer tfr.Close()
	return tfr.Count() >= n, nil
}

// terms analyses q as the text field is analysed, its stems from the
// cache of x.pool (the same tokens, TestStemCacheAnalysesAsBleve): a
// question's words are mostly stemmed already, and snowball's stemmer
// costs about as much as the pooled search's scoring.
func (x *Index) terms(q string) []string {
	tokens := x.pool.text.Analyze([]byte(q))
	terms := make([]string, 0, len(tokens))
	for _, t := range tokens {
		if len(t.Term) > 0 {
			terms = append(terms, string(t.Term))
		}
	}
	return terms
}

// distinct drops repeated terms, keeping the first of each.
func distinct(terms []string) []string {
	seen := make(map[string]bool, len(terms))
	out := terms[:0]
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// filterSearcher is an unscored searcher of the conjunction of f's non-zero
// fields, or nil. Times compare in whole seconds, rounded down: a
// document at t passes From and To when From.Unix() <= t.Unix() < To.Unix().
func filterSearcher(ctx context.Context, r index.IndexReader, f engine.TextFilter) (search.Searcher, error) {
	opts := search.SearcherOptions{Score: "none"}
	var ss []search.Searcher
	fail := func(err error) (search.Searcher, error) {
		for _, s := range ss {
			_ = s.Close()
		}
		return nil, err
	}
	for _, kv := range [...]struct{ field, v string }{{fieldScope, f.Scope}, {fieldSession, f.Session}} {
		if kv.v == "" {
			continue
		}
		s, err := searcher.NewTermSearcher(ctx, r, kv.v, kv.field, 1, opts)
		if err != nil {
			return fail(err)
		}
		ss = append(ss, s)
	}
	if !f.From.IsZero() || !f.To.IsZero() {
		lo, hi := math.Inf(-1), math.Inf(1)
		if !f.From.IsZero() {
			lo = numeric.Int64ToFloat64(timeKey(f.From).UnixNano())
		}
		if !f.To.IsZero() {
			hi = numeric.Int64ToFloat64(timeKey(f.To).UnixNano())
		}
		incl, excl := true, false
		s, err := searcher.NewNumericRangeSearcher(ctx, r, &lo, &hi, &incl, &excl, fieldTime, 1, opts)
		if err != nil {
			return fail(err)
		}
		ss = append(ss, s)
	}
	switch len(ss) {
	case 0:
		return nil, nil
	case 1:
		return ss[0], nil
	}
	s, err := searcher.NewConjunctionSearcher(ctx, r, ss, opts)
	if err != nil {
		return fail(err)
	}
	return s, nil
}

// filterFunc passes the documents that filter matches. Both searchers
// advance in internal-id order, so filter is advanced, never rewound (as
// bleve's boolean query filters).
func filterFunc(filter search.Searcher) searcher.FilterFunc {
	var started bool
	var ref *search.DocumentMatch
	return func(sctx *search.SearchContext, d *search.DocumentMatch) bool {
		var err error
		if !started {
			if ref, err = filter.Next(sctx); err != nil {
				return false
			}
			started = true
		}
		if ref == nil {
			return false // filter exhausted
		}
		c := ref.IndexInternalID.Compare(d.IndexInternalID)
		if c < 0 {
			sctx.DocumentMatchPool.Put(ref)
			if ref, err = filter.Advance(sctx, d.IndexInternalID); err != nil || ref == nil {
				return false
			}
			c = ref.IndexInternalID.Compare(d.IndexInternalID)
		}
		return c == 0
	}
}
