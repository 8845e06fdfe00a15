package eval_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
	"github.com/hmo-dev/hmo/longmemeval"
)

func readLongMemEval(t *testing.T, name string) []longmemeval.Question {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	qs, err := longmemeval.Read(f)
	if err != nil {
		t.Fatalf("longmemeval.Read: %v", err)
	}
	return qs
}

func TestLongMemEval(t *testing.T) {
	tests := []struct {
		file    string
		records int
	}{
		{"../testdata/longmemeval-small.json", 97},
		{"../testdata/longmemeval-oracle-small.json", 25},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			qs := readLongMemEval(t, tt.file)
			var clocks []func() time.Time
			open := func(dir string, clock func() time.Time) (*engine.Engine, error) {
				clocks = append(clocks, clock)
				return hmo.Open(dir, &engine.Options{Clock: clock, Mode: engine.ModeFlat})
			}
			rep, err := eval.LongMemEval(context.Background(), qs, open, eval.Options{WorkDir: t.TempDir()})
			if err != nil {
				t.Fatalf("LongMemEval: %v", err)
			}
			// Seven questions, one an abstention: six scored, one of them
			// (single-session-preference) without has_answer turns.
			if rep.Benchmark != "longmemeval" || rep.Conversations != 7 || rep.Records != tt.records || rep.Skipped != 1 ||
				rep.Overall.Questions != 6 || rep.Overall.TurnQuestions != 5 || rep.Overall.SessionQuestions != 6 {
				t.Errorf("report: benchmark %q, %d haystacks, %d records, %d skipped, %d questions (%d with turns, %d with sessions); want longmemeval, 7, %d, 1, 6 (5, 6)",
					rep.Benchmark, rep.Conversations, rep.Records, rep.Skipped, rep.Overall.Questions,
					rep.Overall.TurnQuestions, rep.Overall.SessionQuestions, tt.records)
			}
			types := []string{"single-session-user", "multi-session", "temporal-reasoning", "knowledge-update",
				"single-session-assistant", "single-session-preference"}
			if len(rep.ByCategory) != len(types) || len(rep.Questions) != 6 {
				t.Errorf("categories %v and %d results, want the six types and 6", keys(rep.ByCategory), len(rep.Questions))
			}
			for i, typ := range types {
				q := rep.Questions[i]
				if q.ID != qs[i].ID || q.Category != typ {
					t.Errorf("result %d: %s %s, want %s %s", i, q.ID, q.Category, qs[i].ID, typ)
				}
				_, turn := q.Metrics[eval.TurnR10]
				if _, sess := q.Metrics[eval.SessionNDCG5]; !sess || turn != (typ != "single-session-preference") {
					t.Errorf("%s: metrics %v: want session metrics, and turn metrics unless it has no has_answer turn", q.ID, q.Metrics)
				}
			}
			if m := rep.ByCategory["single-session-preference"]; m.TurnQuestions != 0 {
				t.Errorf("preference: %d questions with turns, want 0", m.TurnQuestions)
			}
			for name, m := range allMetrics(rep) {
				if v, ok := m.Value(eval.TurnR20); ok && v != 1 {
					// No haystack has more than 20 turns but one: the
					// knowledge-update's 16 turns, all retrievable.
					t.Errorf("%s: R@20 = %v, want 1 (every turn is in the top 20)", name, v)
				}
			}
			if got := rep.Overall.SessionAll5; got != 1 {
				t.Errorf("session All@5 = %v, want 1: no haystack has more than 7 sessions and each question shares words with its evidence", got)
			}
			// The clock of each store was at the question's date when asked.
			for i, c := range clocks[:len(qs)] {
				if got := c(); !qs[i].Abstention() && got.Before(qs[i].Date) {
					t.Errorf("%s: the replay clock ends at %v, before the question date %v", qs[i].ID, got, qs[i].Date)
				}
			}
			if _, err := json.Marshal(rep); err != nil {
				t.Errorf("report does not encode: %v", err)
			}
		})
	}
}
