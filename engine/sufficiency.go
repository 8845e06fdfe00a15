package engine

import (
	"context"
	"slices"

	"github.com/hmo-dev/hmo/retrieve"
)

// Sufficiency decides whether the results a tier produced answer a query,
// so the tier walk can stop there (HMO section 3.2). The LLM
// self-reflection plugs in here; ScoreTest is the default without one.
type Sufficiency interface {
	// Sufficient reports whether res, the fused results of tiers 1 to
	// tier, best first, answer q. It is called without engine locks held,
	// so it may be slow (an LLM call); ctx bounds it. An error counts as
	// "not sufficient" and the walk goes on to the next tier.
	Sufficient(ctx context.Context, q *Query, tier uint8, res []Result) (bool, error)
}

// CoverageBound is implemented by a Sufficiency whose verdict needs the
// best result to reach a lexical coverage of the query. The walk asks it
// before it ranks a tier (unless Tiers 1 and 2 hold every record, when
// their ranking is the answer): when none of the tiers' lexical hits
// reaches the bound, no ranking of them can be sufficient, and the walk
// goes on, to the next tier or the archive, without ranking them. The
// verdict is the one Sufficient would have given; only the work is
// saved.
type CoverageBound interface {
	// NeedsCoverage returns the coverage (Result.Coverage, in [0, 1])
	// that the best of tier's results must reach for q to be answered
	// there; 0 means any, above 1 that no result answers q there.
	NeedsCoverage(q *Query, tier uint8) float64
}

// MatchBound is implemented by a Sufficiency that finds a query ambiguous
// in a tier where several records each hold all of it. The walk asks it
// before it ranks a tier (unless Tiers 1 and 2 hold every record, when
// their ranking is the answer): when more of the tier's records than the
// bound hold every term of the query in their text (a record and the one
// after it counting once), no ranking of the tier is sufficient, and the
// walk goes on, to the next tier or the archive, without ranking it. A
// record holding every term reaches any coverage, so the count is one of
// the records a coverage bound counts, wherever the ranking puts them.
type MatchBound interface {
	// MaxFullMatches returns how many of tier's records may hold every
	// term of q for q to be answered there; negative means any number.
	MaxFullMatches(q *Query, tier uint8) int
}

// ScoreTest is the score test used without an LLM. A tier's results are
// sufficient when there are q.K of them and the best one contains the
// query: its lexical coverage (the IDF-weighted share of the query's
// terms it holds, Result.Coverage) is at least MinCoverage, and its cosine
// similarity at least MinCosine; and no more than MaxMatches results reach
// MinCoverage (a record and the one after it, which is indexed with it,
// count once). When several records of a tier each hold the whole query,
// the query is ambiguous there, and the archive may hold more such
// records and a better one: the walk goes on. That holds whether or not
// the ranking puts them all among the results: through MatchBound, the
// walk also counts the tier's records holding every term of the query
// before it ranks the tier, and goes on when more than MaxMatches do.
//
// Coverage is used rather than a raw score because it means the same
// thing for every query and corpus size: BM25 grows with the archive and
// the query length, and cosine depends on the embedder. On locomo-dev
// with tiers smaller than a conversation, coverage separates "the tiers
// hold the answer" from "they do not" better than cosine does (ROC-AUC
// 0.64 against 0.52 at Tier 1; BENCHMARKS.md), though neither is strong:
// a score test stops early only when the query's terms are all there.
//
// A question asking for a set (retrieve.AsksForSet: "What books has
// Melanie read?") is never answered by the test: its answers were told
// on several occasions, so a record holding the whole query is one of
// them at most, and the others may be outside the tier. The walk goes
// on to the next tier (on LoCoMo dev, "What damages have happened to
// John's car?" stopped at Tier 1 on one of its two evidence turns;
// BENCHMARKS.md, "Multi-hop set questions").
//
// A question with fewer than MinSpecificWords topic words besides names
// ("What did Caroline research?": one) is never answered by the test
// either: every record that uses its one word holds the whole query, so
// a single full match in a tier says nothing about the others in the
// archive (on LoCoMo dev that question stopped at Tier 1 on Melanie's
// "Thanks for the tip, Caroline. Doing research ..." while the evidence,
// Caroline's "Researching adoption agencies", was in the archive).
//
// The zero value stops only on one full match (MinCoverage 0 means
// DefaultMinCoverage, MaxMatches 0 DefaultMaxMatches) and ignores cosine.
type ScoreTest struct {
	MinCoverage float64 // in [0, 1]; 0 means DefaultMinCoverage
	MinCosine   float64 // in [-1, 1]; 0 means no cosine condition
	MaxMatches  int     // results that may reach MinCoverage, and records of the tier that may hold every term (MatchBound); 0 means DefaultMaxMatches, negative no limit
}

// Sufficient implements Sufficiency.
func (s ScoreTest) Sufficient(_ context.Context, q *Query, _ uint8, res []Result) (bool, error) {
	if len(res) == 0 || len(res) < q.K {
		return false, nil
	}
	best := res[0]
	if best.Coverage < s.NeedsCoverage(q, 0) || (s.MinCosine != 0 && best.VectorScore < s.MinCosine) {
		return false, nil // a query the test does not judge needs more than any coverage
	}
	maxMatches := s.MaxFullMatches(q, 0)
	return maxMatches < 0 || fullMatches(res, s.minCoverage()) <= maxMatches, nil
}

// MaxFullMatches implements MatchBound: MaxMatches with its default.
func (s ScoreTest) MaxFullMatches(*Query, uint8) int {
	if s.MaxMatches == 0 {
		return DefaultMaxMatches
	}
	return s.MaxMatches
}

// minCoverage is MinCoverage with its default.
func (s ScoreTest) minCoverage() float64 {
	if s.MinCoverage == 0 {
		return DefaultMinCoverage
	}
	return s.MinCoverage
}

// NeedsCoverage implements CoverageBound. For a query the test does not
// judge (a set question, or one with a single topic word) it is
// neverCovered: no tier's ranking is asked for.
func (s ScoreTest) NeedsCoverage(q *Query, _ uint8) float64 {
	if !q.judges() {
		return neverCovered
	}
	return s.minCoverage() - coverageSlack
}

// neverCovered is above every coverage (coverage is in [0, 1]).
const neverCovered = 2

// judgement is judges' answer for one text.
type judgement struct {
	text string
	ok   bool
	// rq is a query of text alone, asked AsksForSet (when judges got that
	// far) and nothing else: pipeQuery starts from a copy of it, so that
	// the pipeline's stages do not work the answer out again.
	rq retrieve.Query
}

// judges reports whether the score test can judge q: it asks for no set
// and has MinSpecificWords topic words besides names. It is worked out
// once per text and query.
func (q *Query) judges() bool {
	if j := q.judged; j != nil && j.text == q.Text {
		return j.ok
	}
	j := &judgement{text: q.Text, rq: retrieve.Query{Text: q.Text}}
	j.ok = retrieve.NamelessTopics(q.Text, q.topicWords()) >= MinSpecificWords && !j.rq.AsksForSet()
	q.judged = j
	return j.ok
}

// MinSpecificWords is how many topic words that are no names
// (retrieve.NamelessTopicWords) a query needs for the score test to
// judge it: with one, a full match is a match of that word.
const MinSpecificWords = 2

// fullMatches counts the results that reach coverage minCov, as
// chainHeads counts them.
func fullMatches(res []Result, minCov float64) int {
	var full []*Record
	for i := range res {
		if res[i].Coverage >= minCov-coverageSlack {
			full = append(full, &res[i].Record)
		}
	}
	return chainHeads(full)
}

// chainHeads counts the records of full whose previous record is not
// among them. A record indexed with the turn before it
// (Options.IndexContext) also holds that turn's words, so a match whose
// previous record matched too is the same match again, not a second one:
// the score test's results (fullMatches) and the walk's count of a
// tier's records holding every term (tierRuledOut) count so.
func chainHeads(full []*Record) int {
	if len(full) < 2 {
		return len(full)
	}
	ids := make([]uint64, len(full))
	for i, r := range full {
		ids[i] = r.ID
	}
	slices.Sort(ids)
	n := 0
	for _, r := range full {
		if _, prev := slices.BinarySearch(ids, r.Prev); !prev {
			n++
		}
	}
	return n
}

// coverageSlack absorbs rounding in the coverage ratio, so that "every
// term" (1.0) is reachable.
const coverageSlack = 1e-9
