package fts

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/collector"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/hmo-dev/hmo/engine"
)

// candidateFactor is how many more candidates than asked for are drawn
// from bleve before they are rescored with BM25F: bleve's own ranking
// (its "BM25" squares idf, counts repeated words twice, multiplies by
// coord and takes the dictionary size as average length) decides only
// which documents are rescored.
const candidateFactor = 1

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
// bleve finds the candidates, candidateFactor·k of them; they are
// rescored with the index's own statistics. Equal scores are ordered by
// id.
func (x *Index) Search(ctx context.Context, q string, k int, f engine.TextFilter) (hits []engine.TextHit, err error) {
	defer recoverTo("search", &err)
	if k <= 0 {
		return nil, fmt.Errorf("%w: %d", ErrInvalidK, k)
	}
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
	// One snapshot serves the search and the rescoring: the candidates'
	// internal ids need no second lookup.
	adv, err := x.bi.Advanced()
	if err != nil {
		return nil, x.wrap("search", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, x.wrap("search", err)
	}
	defer r.Close()
	if f.Scope != "" {
		all, err := everyDoc(r, fieldScope, f.Scope)
		if err != nil {
			return nil, x.wrap("search", err)
		}
		if all {
			f.Scope = "" // every document passes: a filter that drops none
		}
	}
	matches, err := x.collect(ctx, r, x.query(terms, f), candidateFactor*k)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, x.wrap("search", err)
	}
	if hits, err = x.rescore(ctx, r, terms, matches); err != nil {
		return nil, err
	}
	slices.SortFunc(hits, func(a, b engine.TextHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return hits[:min(k, len(hits))], nil
}

// collect runs bleve's search of q on snapshot r and returns its best
// size matches, as bleve.Index.SearchInContext does for a request of
// that size sorted by score: the same scoring model, searcher and top-n
// collector, without the stored fields.
func (x *Index) collect(ctx context.Context, r index.IndexReader, q query.Query, size int) (search.DocumentMatchCollection, error) {
	m := x.bi.Mapping()
	model := index.DefaultScoringModel
	if im, ok := m.(*mapping.IndexMappingImpl); ok && im.ScoringModel == index.BM25Scoring {
		model = index.BM25Scoring
	}
	ctx = context.WithValue(ctx, search.GetScoringModelCallbackKey,
		search.GetScoringModelCallbackFn(func() string { return model }))
	ctx = search.ContextWithTermSearchersCounter(ctx)
	s, err := q.Searcher(ctx, r, m, search.SearcherOptions{})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	coll := collector.NewTopNCollector(size, 0, search.SortOrder{&search.SortScore{Desc: true}})
	if err := coll.Collect(ctx, s, r); err != nil {
		return nil, err
	}
	return coll.Results(), nil
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

// rescore computes the BM25F score and coverage of each match from
// snapshot r, the one the matches come from: N, df and the field totals
// of that snapshot, and each candidate's term frequencies and field
// lengths from the postings (bleve keeps a field's length in its norm,
// 1/√len).
func (x *Index) rescore(ctx context.Context, r index.IndexReader, terms []string, matches search.DocumentMatchCollection) ([]engine.TextHit, error) {
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
	cands := make([]*cand, 0, len(matches))
	for _, m := range matches {
		id, err := strconv.ParseUint(m.ID, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("fts: search: %w (document id %q)", ErrCorrupt, m.ID)
		}
		cands = append(cands, &cand{iid: m.IndexInternalID, hit: engine.TextHit{ID: id}, tf: make([][nFields]float64, len(terms))})
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
	tokens := x.analyzer.Analyze([]byte(q))
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

// query is the disjunction of terms over the scored fields, restricted by
// f without changing scores.
func (x *Index) query(terms []string, f engine.TextFilter) query.Query {
	tqs := make([]query.Query, 0, len(terms)*nFields)
	for _, t := range terms {
		for _, field := range bm25Fields {
			tq := query.NewTermQuery(t)
			tq.SetField(field)
			tqs = append(tqs, tq)
		}
	}
	match := query.NewDisjunctionQuery(tqs)
	match.SetMin(1)
	filter := filterQuery(f)
	if filter == nil {
		return match
	}
	b := query.NewBooleanQuery(nil, nil, nil)
	b.AddMust(match)
	b.AddFilter(filter)
	return b
}

// filterQuery is the conjunction of f's non-zero fields, or nil. Times
// compare in whole seconds, rounded down: a document at t passes From and
// To when From.Unix() <= t.Unix() < To.Unix().
func filterQuery(f engine.TextFilter) query.Query {
	var qs []query.Query
	if f.Scope != "" {
		qs = append(qs, termOn(fieldScope, f.Scope))
	}
	if f.Session != "" {
		qs = append(qs, termOn(fieldSession, f.Session))
	}
	if !f.From.IsZero() || !f.To.IsZero() {
		incl, excl := true, false
		var from, to time.Time
		if !f.From.IsZero() {
			from = timeKey(f.From)
		}
		if !f.To.IsZero() {
			to = timeKey(f.To)
		}
		r := query.NewDateRangeInclusiveQuery(from, to, &incl, &excl)
		r.SetField(fieldTime)
		qs = append(qs, r)
	}
	switch len(qs) {
	case 0:
		return nil
	case 1:
		return qs[0]
	}
	return query.NewConjunctionQuery(qs)
}

func termOn(field, v string) query.Query {
	q := query.NewTermQuery(v)
	q.SetField(field)
	return q
}
