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

// ScoreTest is the score test used without an LLM: a tier's results are
// sufficient when there are q.K of them and the best one both matches the
// query lexically and has a cosine similarity of at least MinCosine. Its
// calibration is open work (BENCHMARKS.md): with the embedded embedder the
// cosine separates "answer in this tier" from "answer elsewhere" poorly.
type ScoreTest struct {
	MinCosine float64
}

// Sufficient implements Sufficiency.
func (s ScoreTest) Sufficient(_ context.Context, q *Query, _ uint8, res []Result) (bool, error) {
	if len(res) < q.K || len(res) == 0 {
		return false, nil
	}
	return res[0].TextScore > 0 && res[0].VectorScore >= s.MinCosine, nil
}
