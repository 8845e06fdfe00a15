package engine

import "context"

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

// ScoreTest is the score test used without an LLM. A tier's results are
// sufficient when there are q.K of them and the best one contains the
// query: its lexical coverage (the IDF-weighted share of the query's
// terms it holds, Result.Coverage) is at least MinCoverage, and its cosine
// similarity at least MinCosine.
//
// Coverage is used rather than a raw score because it means the same
// thing for every query and corpus size: BM25 grows with the archive and
// the query length, and cosine depends on the embedder. On locomo-dev
// with tiers smaller than a conversation, coverage separates "the tiers
// hold the answer" from "they do not" better than cosine does (ROC-AUC
// 0.64 against 0.52 at Tier 1; BENCHMARKS.md), though neither is strong:
// a score test stops early only when the query's terms are all there.
//
// The zero value stops only on full coverage (MinCoverage 0 means
// DefaultMinCoverage) and ignores cosine.
type ScoreTest struct {
	MinCoverage float64 // in [0, 1]; 0 means DefaultMinCoverage
	MinCosine   float64 // in [-1, 1]; 0 means no cosine condition
}

// Sufficient implements Sufficiency.
func (s ScoreTest) Sufficient(_ context.Context, q *Query, _ uint8, res []Result) (bool, error) {
	if len(res) == 0 || len(res) < q.K {
		return false, nil
	}
	minCov := s.MinCoverage
	if minCov == 0 {
		minCov = DefaultMinCoverage
	}
	best := res[0]
	return best.Coverage >= minCov-coverageSlack && (s.MinCosine == 0 || best.VectorScore >= s.MinCosine), nil
}

// coverageSlack absorbs rounding in the coverage ratio, so that "every
// term" (1.0) is reachable.
const coverageSlack = 1e-9
