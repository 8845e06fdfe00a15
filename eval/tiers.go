package eval

import "github.com/hmo-dev/hmo/engine"

// TierReport sums what the tier walk did over a run: the in-situ stream of
// HMO's Appendix C, where every question updates the tiers.
type TierReport struct {
	Queries            uint64    `json:"queries"`
	Served             [4]uint64 `json:"served"`      // queries answered by tier 1, 2 or 3 (index = tier)
	Tier3Share         float64   `json:"tier3_share"` // share of queries that reached the archive
	CandidatesPerQuery float64   `json:"candidates_per_query"`
	GateFirings        int       `json:"gate_firings"`
	Promotions         uint64    `json:"promotions"`
	Demotions          uint64    `json:"demotions"`
	scored             uint64
}

func (rep *Report) addTiers(s engine.TierStats) {
	if s.Queries == 0 {
		return
	}
	if rep.Tiers == nil {
		rep.Tiers = &TierReport{}
	}
	t := rep.Tiers
	t.Queries += s.Queries
	for i := range t.Served {
		t.Served[i] += s.Served[i]
	}
	t.scored += s.Scored
	t.GateFirings += s.Firings
	t.Promotions += s.Promotions
	t.Demotions += s.Demotions
	t.Tier3Share = float64(t.Served[3]) / float64(t.Queries)
	t.CandidatesPerQuery = float64(t.scored) / float64(t.Queries)
}
