package eval_test

import (
	"math"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/eval"
)

// l is 1/log2(i+1), the gain of a relevant item at rank i.
func l(i int) float64 { return 1 / math.Log2(float64(i+1)) }

func TestNDCG(t *testing.T) {
	tests := []struct {
		name     string
		ranked   []string
		relevant []string
		k        int
		want     float64
	}{
		{"ideal", []string{"a", "b", "x"}, []string{"a", "b"}, 5, 1},
		{"one of one at 1", []string{"a", "x", "y"}, []string{"a"}, 5, 1},
		// rel at 2 and 4: (1/log2 3 + 1/log2 5) / (1 + 1/log2 3)
		// = (0.630930 + 0.430677) / 1.630930 = 0.650920.
		{"ranks 2 and 4 of two", []string{"x", "a", "y", "b", "z"}, []string{"a", "b"}, 5, 0.650920},
		// One relevant at rank 3 of one: 1/log2(4) / 1 = 0.5.
		{"rank 3 of one", []string{"x", "y", "a"}, []string{"a"}, 5, 0.5},
		// Beyond k gains nothing: rank 6.
		{"below the cut", []string{"x", "y", "z", "u", "v", "a"}, []string{"a"}, 5, 0},
		// Seven relevant, two found at 1 and 5; the ideal fills all 5
		// ranks: (1 + 1/log2 6) / (1 + 1/log2 3 + 1/2 + 1/log2 5 + 1/log2 6).
		{"more relevant than k", []string{"a", "x", "y", "z", "b"}, []string{"a", "b", "c", "d", "e", "f", "g"}, 5,
			(1 + l(5)) / (1 + l(2) + l(3) + l(4) + l(5))},
		{"repeated item gains once", []string{"a", "a", "b"}, []string{"a", "b"}, 5, (1 + l(3)) / (1 + l(2))},
		{"nothing relevant", []string{"a"}, nil, 5, 0},
		{"empty ranking", nil, []string{"a"}, 5, 0},
		{"k zero", []string{"a"}, []string{"a"}, 0, 0},
	}
	for _, tt := range tests {
		if got := eval.NDCG(tt.ranked, tt.relevant, tt.k); math.Abs(got-tt.want) > 1e-6 {
			t.Errorf("%s: NDCG = %.6f, want %.6f", tt.name, got, tt.want)
		}
	}
}

func TestScore(t *testing.T) {
	// The top 20 in rank order; positions are 1-based in the comments.
	ranked := []string{
		"D1:1", "D1:2", "D2:1", "D2:2", "D2:3", // 1-5
		"D3:1", "D3:2", "D3:3", "D4:1", "D4:2", // 6-10
		"D5:1", "D5:2", "D5:3", "D6:1", "D6:2", // 11-15
		"D7:1", "D7:2", "D7:3", "D8:1", "D8:2", // 16-20
	}
	// The distinct sessions in rank order: 1, 2, 3, 4, 5, 6, 7, 8.
	tests := []struct {
		name     string
		ranked   []string
		evidence []string
		// R@5, R@10, R@20, hit@10, share of sessions in the top 5 turns,
		// all sessions in the top 5 sessions, NDCG@5 of sessions.
		want [7]float64
	}{
		{"first hit", ranked, []string{"D1:1"}, [7]float64{1, 1, 1, 1, 1, 1, 1}},
		// Session 3 is the 3rd session: NDCG 1/log2(4) = 0.5.
		{"at rank 6", ranked, []string{"D3:1"}, [7]float64{0, 1, 1, 1, 0, 1, 0.5}},
		// Session 5 is the 5th session: NDCG 1/log2(6).
		{"at rank 12", ranked, []string{"D5:2"}, [7]float64{0, 0, 1, 0, 0, 1, l(5)}},
		{"missing", ranked, []string{"D9:9"}, [7]float64{0, 0, 0, 0, 0, 0, 0}},
		// Ranks 2, 7, 15 and none: 1/4 at 5, 2/4 at 10, 3/4 at 20.
		// Sessions 1, 3, 6, 9: only session 1 is in the top 5 turns; the
		// top 5 sessions (1-5) hold 1 and 3: NDCG (1 + 1/2) / ideal of 4.
		{"four pieces", ranked, []string{"D1:2", "D3:2", "D6:2", "D9:1"},
			[7]float64{0.25, 0.5, 0.75, 0, 0.25, 0, (1 + l(3)) / (1 + l(2) + l(3) + l(4))}},
		// Ranks 1 and 9: 1/2 at 5, all at 10; the top 5 turns hold
		// session 1 only (sessions 1 and 4 wanted); sessions 1 and 4 are
		// both among the first 5 sessions: NDCG (1 + 1/log2 5) / (1 + 1/log2 3).
		{"two pieces", ranked, []string{"D1:1", "D4:1"}, [7]float64{0.5, 1, 1, 1, 0.5, 1, (1 + l(4)) / (1 + l(2))}},
		// The session counts even when the turn does not: D2:9 is not
		// ranked, but session 2 is the 2nd session.
		{"session hit, turn miss", ranked, []string{"D2:9"}, [7]float64{0, 0, 0, 0, 1, 1, l(2)}},
		{"duplicates count once", ranked, []string{"D3:1", "D3:1", "D9:9"}, [7]float64{0, 0.5, 0.5, 0, 0, 0, 0.5 / (1 + l(2))}},
		{"short ranking", []string{"D1:1", "D2:2"}, []string{"D2:2", "D3:3"}, [7]float64{0.5, 0.5, 0.5, 0, 0.5, 0, l(2) / (1 + l(2))}},
		{"nothing ranked", nil, []string{"D1:1"}, [7]float64{0, 0, 0, 0, 0, 0, 0}},
	}
	names := []string{eval.TurnR5, eval.TurnR10, eval.TurnR20, eval.AllHit, eval.SessionTop5Turns, eval.SessionAll5, eval.SessionNDCG5}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := eval.ScoreRanking(tt.ranked, eval.LoCoMoEvidence(tt.evidence))
			if len(m) != len(names) {
				t.Errorf("Score returned %d metrics %v, want %d", len(m), m, len(names))
			}
			for i, name := range names {
				got, ok := m[name]
				if !ok || math.Abs(got-tt.want[i]) > 1e-9 {
					t.Errorf("%s = %v (present %v), want %v", name, got, ok, tt.want[i])
				}
			}
			// Score gives the same figures as one question's Metrics.
			s := eval.Score(tt.ranked, tt.evidence)
			if s.Questions != 1 || s.TurnQuestions != 1 || s.SessionQuestions != 1 {
				t.Errorf("Score counts %d questions, %d with turns, %d with sessions; want 1, 1, 1", s.Questions, s.TurnQuestions, s.SessionQuestions)
			}
			for i, name := range names {
				if got, ok := s.Value(name); !ok || math.Abs(got-tt.want[i]) > 1e-9 {
					t.Errorf("Score: %s = %v (present %v), want %v", name, got, ok, tt.want[i])
				}
			}
		})
	}
}

// TestScoreUndefined checks that a question without evidence turns has
// no turn metrics and one without evidence sessions no session metrics.
func TestScoreUndefined(t *testing.T) {
	sessionOf := func(turn string) string { s, _, _ := strings.Cut(turn, "_"); return s }
	tests := []struct {
		name string
		ev   eval.Evidence
		want []string
	}{
		{"sessions only", eval.Evidence{Sessions: []string{"s2"}, SessionOf: sessionOf},
			[]string{eval.SessionTop5Turns, eval.SessionAll5, eval.SessionNDCG5}},
		{"turns only", eval.Evidence{Turns: []string{"s1_2"}}, []string{eval.TurnR5, eval.TurnR10, eval.TurnR20, eval.AllHit}},
		{"nothing", eval.Evidence{SessionOf: sessionOf}, nil},
	}
	for _, tt := range tests {
		m := eval.ScoreRanking([]string{"s1_1", "s2_1", "s1_2"}, tt.ev)
		if len(m) != len(tt.want) {
			t.Errorf("%s: metrics %v, want exactly %v", tt.name, m, tt.want)
		}
		for _, k := range tt.want {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: metric %s missing from %v", tt.name, k, m)
			}
		}
	}
	// LongMemEval-style ids: s2 is the 2nd session, s1 the first.
	m := eval.ScoreRanking([]string{"s1_1", "s2_1", "s1_2"}, eval.Evidence{Turns: []string{"s1_2"}, Sessions: []string{"s2"}, SessionOf: sessionOf})
	if m[eval.TurnR5] != 1 || m[eval.SessionAll5] != 1 || math.Abs(m[eval.SessionNDCG5]-l(2)) > 1e-12 {
		t.Errorf("metrics %v, want R@5 1, all-sessions 1, NDCG %v", m, l(2))
	}
}
