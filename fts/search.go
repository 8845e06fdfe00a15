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

// scanFactor: a term's postings at most this many times longer than the
// candidate list are read through; longer ones are searched by seeking
// each candidate.
const scanFactor = 8

// Search returns up to k ids of documents matching any word of q, best
// BM25F score first (see Scoring), restricted by f. A query with no
// indexable words (empty, punctuation, or only stop words for an analyzer
// that drops them) returns no hits and no error. k <= 0 fails with
// ErrInvalidK. Search stops early with ctx's error when ctx is done.
//
// The top k are found by MaxScore over bleve's postings (topK) and
// scored with the statistics of one snapshot of the index. Equal scores
// are ordered by id.
func (x *Index) Search(ctx context.Context, q string, k int, f engine.TextFilter) (hits []engine.TextHit, err error) {
	defer recoverTo("search", &err)
	if k <= 0 {
		return nil, fmt.Errorf("%w: %d", ErrInvalidK, k)
	}
	x.life.RLock()
	defer x.life.RUnlock()
	if x.closed.Load() {
		return nil, fmt.Errorf("fts: search: %w", ErrClosed)
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
		return nil, x.wrap("search", err)
	}
	defer closeReader(r, &err)
	if f.Scope != "" {
		all, err := everyDoc(r, fieldScope, f.Scope)
		if err != nil {
			return nil, x.wrap("search", err)
		}
		if all {
			f.Scope = "" // every document passes: a filter that drops none
		}
	}
	cands, err := x.topK(ctx, r, terms, f, k)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, x.wrap("search", err)
	}
	if hits, err = x.rescore(ctx, r, terms, cands); err != nil {
		return nil, err
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

// candidate is a document of the top k (topK), to be scored.
type candidate struct {
	iid index.IndexInternalID
	id  uint64
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

// rescore computes the BM25F score and coverage of each candidate from
// the snapshot r: N, df and the field totals of that snapshot, and each
// candidate's term frequencies and field lengths from the postings (bleve
// keeps a field's length in its norm, 1/√len).
func (x *Index) rescore(ctx context.Context, r index.IndexReader, terms []string, ids []candidate) ([]engine.TextHit, error) {
	n, err := r.DocCount()
	if err != nil {
		return nil, x.wrap("search", err)
	}
	tb, err := r.GetInternal(keyLengths)
	if err != nil {
		return nil, x.wrap("search", err)
	}
	tot, err := decodeTotals(tb)
	if err != nil {
		return nil, err
	}
	st := fieldStats{n: float64(n)}
	for f := range nFields {
		st.total[f] = float64(tot[f])
	}
	// The candidates, in internal-id order.
	type cand struct {
		iid index.IndexInternalID
		hit engine.TextHit
		tf  [][nFields]float64 // per term
		dl  [nFields]float64
	}
	cands := make([]*cand, 0, len(ids))
	for _, c := range ids {
		cands = append(cands, &cand{iid: c.iid, hit: engine.TextHit{ID: c.id}, tf: make([][nFields]float64, len(terms))})
	}
	slices.SortFunc(cands, func(a, b *cand) int { return a.iid.Compare(b.iid) })
	byIID := make(map[string]*cand, len(cands))
	for _, c := range cands {
		byIID[string(c.iid)] = c
	}
	idfs := make([]float64, len(terms))
	var buf index.TermFieldDoc // reused by every posting read
	for ti, t := range terms {
		var df uint64
		for f, field := range bm25Fields {
			tfr, err := r.TermFieldReader(ctx, []byte(t), field, true, true, false)
			if err != nil {
				return nil, x.wrap("search", err)
			}
			cnt := tfr.Count()
			df = max(df, cnt)
			if cnt <= scanFactor*uint64(len(cands)) {
				// Short postings: read them through rather than seek
				// each candidate.
				for {
					d, err := tfr.Next(&buf)
					if err != nil {
						tfr.Close()
						return nil, x.wrap("search", err)
					}
					if d == nil {
						break
					}
					if c, ok := byIID[string(d.ID)]; ok {
						c.tf[ti][f] = float64(d.Freq)
						if d.Norm > 0 {
							c.dl[f] = math.Round(1 / (d.Norm * d.Norm))
						}
					}
				}
				tfr.Close()
				continue
			}
			var d *index.TermFieldDoc
			for _, c := range cands {
				if d != nil && d.ID.Compare(c.iid) > 0 {
					continue // the postings skipped past this candidate
				}
				if d, err = tfr.Advance(c.iid, &buf); err != nil {
					tfr.Close()
					return nil, x.wrap("search", err)
				}
				if d == nil {
					break
				}
				if d.ID.Equals(c.iid) {
					c.tf[ti][f] = float64(d.Freq)
					if d.Norm > 0 {
						c.dl[f] = math.Round(1 / (d.Norm * d.Norm))
					}
				}
			}
			tfr.Close()
		}
		idfs[ti] = idf(st.n, float64(df))
	}
	var idfSum float64
	for _, v := range idfs {
		idfSum += v
	}
	hits := make([]engine.TextHit, 0, len(cands))
	for _, c := range cands {
		for ti := range terms {
			c.hit.Score += x.scoring.termScore(idfs[ti], &st, &c.tf[ti], &c.dl)
			if said(&c.tf[ti]) {
				c.hit.Coverage += idfs[ti]
			}
		}
		if c.hit.Score == 0 {
			continue
		}
		if idfSum > 0 {
			c.hit.Coverage /= idfSum
		}
		hits = append(hits, c.hit)
	}
	return hits, nil
}

// terms analyses q as the text field is analysed.
func (x *Index) terms(q string) []string {
	tokens := x.an.text.Analyze([]byte(q))
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
