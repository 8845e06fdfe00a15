package eval

import (
	"math"
)

// Metric names: the keys of QuestionResult.Metrics, in the order tables
// and comparisons show them.
const (
	TurnR5  = "turn_r5"  // share of the evidence turns in the top 5
	TurnR10 = "turn_r10" // share of the evidence turns in the top 10
	TurnR20 = "turn_r20" // share of the evidence turns in the top 20
	AllHit  = "all_hit_10"
	// SessionTop5Turns is the share of the evidence sessions that one of
	// the top 5 turns belongs to (the figure earlier reports called
	// session recall).
	SessionTop5Turns = "session_recall"
	// SessionAll5 is 1 when every evidence session is among the first 5
	// distinct sessions of the ranking, else 0: Recall@5 as the HMO and
	// LongMemEval papers count it ("recall_all").
	SessionAll5 = "session_all_5"
	// SessionNDCG5 is the NDCG@5 of the ranking of distinct sessions
	// (binary relevance: an evidence session is relevant).
	SessionNDCG5 = "session_ndcg_5"
)

// MetricNames lists every metric in display order.
var MetricNames = []string{TurnR5, TurnR10, TurnR20, AllHit, SessionTop5Turns, SessionAll5, SessionNDCG5}

// MetricLabel is the short column name of a metric.
func MetricLabel(name string) string {
	switch name {
	case TurnR5:
		return "R@5"
	case TurnR10:
		return "R@10"
	case TurnR20:
		return "R@20"
	case AllHit:
		return "hit@10"
	case SessionTop5Turns:
		return "sessR@5"
	case SessionAll5:
		return "sAll@5"
	case SessionNDCG5:
		return "sNDCG@5"
	}
	return name
}

// turnMetric reports whether a metric is computed from evidence turns
// (the others from evidence sessions).
func turnMetric(name string) bool {
	return name == TurnR5 || name == TurnR10 || name == TurnR20 || name == AllHit
}

// Depths are the cut-offs turn recall is reported at.
var Depths = []int{5, 10, 20}

// depthMetric names the turn recall metric of a depth.
var depthMetric = map[int]string{5: TurnR5, 10: TurnR10, 20: TurnR20}

// Evidence is what a question asks the ranking to find.
type Evidence struct {
	// Turns are the ids of the evidence turns; none leaves the turn
	// metrics undefined for the question.
	Turns []string
	// Sessions are the ids of the evidence sessions; none leaves the
	// session metrics undefined.
	Sessions []string
	// SessionOf names the session of a ranked turn id.
	SessionOf func(turn string) string
}

// Score computes one LoCoMo question's metrics from the ranked turn ids
// (best first) and its evidence turns ("D3:7").
func Score(ranked, evidence []string) Metrics {
	return *aggregate([]*QuestionResult{{Metrics: ScoreRanking(ranked, LoCoMoEvidence(evidence))}})
}

// ScoreRanking computes one question's metrics from the ranked turn ids
// (best first), by metric name. Turn metrics are absent when the evidence
// names no turn, session metrics when it names no session. Repeated ids
// count once.
func ScoreRanking(ranked []string, ev Evidence) map[string]float64 {
	m := map[string]float64{}
	if len(ev.Turns) > 0 {
		for _, d := range Depths {
			m[depthMetric[d]] = fraction(ev.Turns, ranked[:min(d, len(ranked))])
		}
		if m[TurnR10] == 1 {
			m[AllHit] = 1
		} else {
			m[AllHit] = 0
		}
	}
	if len(ev.Sessions) > 0 && ev.SessionOf != nil {
		top := ranked[:min(5, len(ranked))]
		sess := make([]string, len(top))
		for i, t := range top {
			sess[i] = ev.SessionOf(t)
		}
		m[SessionTop5Turns] = fraction(ev.Sessions, sess)
		order := sessionRanking(ranked, ev.SessionOf, 5)
		if fraction(ev.Sessions, order) == 1 {
			m[SessionAll5] = 1
		} else {
			m[SessionAll5] = 0
		}
		m[SessionNDCG5] = NDCG(order, ev.Sessions, 5)
	}
	return m
}

// sessionRanking returns the first k distinct sessions of the ranked
// turns, in order of first appearance.
func sessionRanking(ranked []string, sessionOf func(string) string, k int) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range ranked {
		s := sessionOf(t)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
			if len(out) == k {
				break
			}
		}
	}
	return out
}

// NDCG is the normalised discounted cumulative gain at k of a ranking
// with binary relevance: DCG = Σ_{i=1..k} rel_i / log2(i+1), divided by
// the DCG of an ideal ranking that puts the min(k, |relevant|) distinct
// relevant items first. Repeated items in the ranking gain once. It is 0
// when nothing is relevant.
func NDCG(ranked, relevant []string, k int) float64 {
	rel := map[string]bool{}
	for _, r := range relevant {
		rel[r] = true
	}
	if len(rel) == 0 || k <= 0 {
		return 0
	}
	var dcg, ideal float64
	seen := map[string]bool{}
	for i, r := range ranked[:min(k, len(ranked))] {
		if rel[r] && !seen[r] {
			dcg += 1 / math.Log2(float64(i+2))
		}
		seen[r] = true
	}
	for i := range min(k, len(rel)) {
		ideal += 1 / math.Log2(float64(i+2))
	}
	return dcg / ideal
}

// fraction is the share of the distinct ids of want found in got, 0 when
// want is empty.
func fraction(want, got []string) float64 {
	have := map[string]bool{}
	for _, g := range got {
		have[g] = true
	}
	need := map[string]bool{}
	for _, w := range want {
		need[w] = true
	}
	if len(need) == 0 {
		return 0
	}
	hit := 0
	for k := range need {
		if have[k] {
			hit++
		}
	}
	return float64(hit) / float64(len(need))
}

// Metrics are a group of questions' figures, each averaged over the
// questions it is defined for.
type Metrics struct {
	Questions int `json:"questions"`
	// TurnQuestions are the questions with evidence turns, the ones the
	// turn metrics average over (all of them on LoCoMo).
	TurnQuestions int             `json:"turn_questions"`
	TurnRecall    map[int]float64 `json:"turn_recall"` // depth -> mean share of the evidence turns retrieved
	AllHit10      float64         `json:"all_hit_10"`  // share of questions with every evidence turn in the top 10
	// SessionQuestions are the questions with evidence sessions, the ones
	// the session metrics average over.
	SessionQuestions int     `json:"session_questions"`
	SessionRecall    float64 `json:"session_recall"` // SessionTop5Turns
	SessionAll5      float64 `json:"session_all_5"`
	SessionNDCG5     float64 `json:"session_ndcg_5"`
}

// Value returns a metric by name (MetricNames); ok is false when no
// question of the group defines it.
func (m *Metrics) Value(name string) (v float64, ok bool) {
	if turnMetric(name) {
		if m.TurnQuestions == 0 {
			return 0, false
		}
	} else if m.SessionQuestions == 0 {
		return 0, false
	}
	switch name {
	case TurnR5:
		return m.TurnRecall[5], true
	case TurnR10:
		return m.TurnRecall[10], true
	case TurnR20:
		return m.TurnRecall[20], true
	case AllHit:
		return m.AllHit10, true
	case SessionTop5Turns:
		return m.SessionRecall, true
	case SessionAll5:
		return m.SessionAll5, true
	case SessionNDCG5:
		return m.SessionNDCG5, true
	}
	return 0, false
}

// aggregate averages the results' metrics.
func aggregate(rs []*QuestionResult) *Metrics {
	m := &Metrics{Questions: len(rs), TurnRecall: map[int]float64{}}
	sum, n := map[string]float64{}, map[string]int{}
	for _, r := range rs {
		for k, v := range r.Metrics {
			sum[k] += v
			n[k]++
		}
	}
	mean := func(k string) float64 {
		if n[k] == 0 {
			return 0
		}
		return sum[k] / float64(n[k])
	}
	m.TurnQuestions, m.SessionQuestions = n[TurnR10], n[SessionAll5]
	if m.TurnQuestions > 0 {
		for d, k := range depthMetric {
			m.TurnRecall[d] = mean(k)
		}
	}
	m.AllHit10, m.SessionRecall = mean(AllHit), mean(SessionTop5Turns)
	m.SessionAll5, m.SessionNDCG5 = mean(SessionAll5), mean(SessionNDCG5)
	return m
}
