package fts

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/hmo-dev/hmo/engine"
)

// Search returns up to k ids of documents matching any word of q, best
// BM25 score first, restricted by f. A query with no indexable words (empty,
// punctuation, or only stop words for an analyzer that drops them) returns
// no hits and no error. k <= 0 fails with ErrInvalidK. Search stops early
// with ctx's error when ctx is done.
//
// Equal scores are ordered by id; which of several documents tied at the
// k-th place make the cut is unspecified.
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
	terms := x.terms(q)
	if len(terms) == 0 {
		return nil, nil
	}
	req := bleve.NewSearchRequestOptions(x.query(terms, f), k, 0, false)
	res, err := x.bi.SearchInContext(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, x.wrap("search", err)
	}
	hits = make([]engine.TextHit, 0, len(res.Hits))
	for _, h := range res.Hits {
		id, err := strconv.ParseUint(h.ID, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("fts: search: %w (document id %q)", ErrCorrupt, h.ID)
		}
		hits = append(hits, engine.TextHit{ID: id, Score: h.Score})
	}
	// bleve orders equal scores by its internal document number, which
	// depends on map order inside a batch.
	slices.SortStableFunc(hits, func(a, b engine.TextHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
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

// query is the disjunction of terms over the text field (what a bleve match
// query with operator "or" builds), restricted by f without changing
// scores.
func (x *Index) query(terms []string, f engine.TextFilter) query.Query {
	tqs := make([]query.Query, len(terms))
	for i, t := range terms {
		tq := query.NewTermQuery(t)
		tq.SetField(fieldText)
		tqs[i] = tq
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
