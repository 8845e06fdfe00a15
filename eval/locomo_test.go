package eval_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
	"github.com/hmo-dev/hmo/locomo"
)

func readFixture(t *testing.T) []locomo.Conversation {
	t.Helper()
	f, err := os.Open("../locomo/testdata/small.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	convs, err := locomo.Read(f)
	if err != nil {
		t.Fatalf("locomo.Read: %v", err)
	}
	return convs
}

func TestLoCoMo(t *testing.T) {
	convs := readFixture(t)
	work := t.TempDir()
	var opened []string
	var progress [][2]int
	open := func(dir string, clock func() time.Time) (*engine.Engine, error) {
		opened = append(opened, dir)
		return hmo.Open(dir, &engine.Options{Clock: clock})
	}
	rep, err := eval.LoCoMo(context.Background(), convs, open, eval.Options{
		WorkDir:  work,
		Progress: func(done, total int) { progress = append(progress, [2]int{done, total}) },
	})
	if err != nil {
		t.Fatalf("LoCoMo: %v", err)
	}
	// conv-a: 11 turns, 9 non-adversarial questions of which 3 have no
	// resolvable evidence ("D", "D:11:26", none). conv-b: 5 turns, 3
	// non-adversarial questions, one naming a turn of conv-a.
	if rep.Conversations != 2 || rep.Records != 16 || rep.Overall.Questions != 8 || rep.Skipped != 4 {
		t.Errorf("report counts conversations=%d records=%d questions=%d skipped=%d, want 2, 16, 8, 4",
			rep.Conversations, rep.Records, rep.Overall.Questions, rep.Skipped)
	}
	wantCat := map[string]int{"single-hop": 4, "temporal": 2, "multi-hop": 2}
	if len(rep.ByCategory) != len(wantCat) {
		t.Errorf("categories %v, want %v", keys(rep.ByCategory), wantCat)
	}
	for name, n := range wantCat {
		if m := rep.ByCategory[name]; m == nil || m.Questions != n {
			t.Errorf("category %s: %+v, want %d questions", name, m, n)
		}
	}
	if _, ok := rep.ByCategory["adversarial"]; ok {
		t.Error("adversarial questions were scored, want them skipped")
	}
	// Each conversation has at most 20 turns, so the top 20 hold every
	// evidence turn; the lower depths cannot do better than the higher.
	for name, m := range allMetrics(rep) {
		if got := m.TurnRecall[20]; got != 1 {
			t.Errorf("%s: R@20 = %v, want 1 (every turn is in the top 20)", name, got)
		}
		if !(m.TurnRecall[5] <= m.TurnRecall[10] && m.TurnRecall[10] <= m.TurnRecall[20]) {
			t.Errorf("%s: recall not monotone in depth: %v", name, m.TurnRecall)
		}
		if m.AllHit10 > m.TurnRecall[10] || m.SessionRecall < 0 || m.SessionRecall > 1 {
			t.Errorf("%s: hit@10 %v, session recall %v out of bounds", name, m.AllHit10, m.SessionRecall)
		}
	}
	// Questions that share words with their single evidence turn find it.
	if got := rep.Overall.TurnRecall[5]; got < 0.5 {
		t.Errorf("overall R@5 = %v, want at least 0.5 on this easy fixture", got)
	}
	if rep.MedianLatencyMS <= 0 || rep.P99LatencyMS < rep.MedianLatencyMS || rep.QuestionsPerSec <= 0 || rep.IngestSeconds <= 0 {
		t.Errorf("timings median %v p99 %v q/s %v ingest %v, want positive and p99 >= median",
			rep.MedianLatencyMS, rep.P99LatencyMS, rep.QuestionsPerSec, rep.IngestSeconds)
	}
	if len(opened) != 2 || opened[0] == opened[1] {
		t.Errorf("opened stores %q, want two distinct", opened)
	}
	if want := [][2]int{{1, 2}, {2, 2}}; len(progress) != 2 || progress[0] != want[0] || progress[1] != want[1] {
		t.Errorf("progress calls %v, want %v", progress, want)
	}
	if left, _ := filepath.Glob(filepath.Join(work, "*")); len(left) != 0 {
		t.Errorf("work dir keeps %q after the run, want it empty", left)
	}
	// Per-question results, ids by sample and position in its qa list:
	// conv-a's questions 4, 5 and 7 have no resolvable evidence and 8 is
	// adversarial; conv-b's 2 names a turn of conv-a and 3 is adversarial.
	var ids []string
	for _, q := range rep.Questions {
		ids = append(ids, q.ID)
		if len(q.Metrics) != len(eval.MetricNames) || rep.ByCategory[q.Category] == nil {
			t.Errorf("result %s (%s): metrics %v, want all %d", q.ID, q.Category, q.Metrics, len(eval.MetricNames))
		}
	}
	if want := "conv-a:q0 conv-a:q1 conv-a:q2 conv-a:q3 conv-a:q6 conv-a:q9 conv-b:q0 conv-b:q1"; strings.Join(ids, " ") != want {
		t.Errorf("question ids %v, want %s", ids, want)
	}
	if rep.Benchmark != "locomo" || rep.Overall.SessionQuestions != 8 || rep.Overall.TurnQuestions != 8 {
		t.Errorf("benchmark %q, %d questions with sessions, %d with turns; want locomo, 8, 8",
			rep.Benchmark, rep.Overall.SessionQuestions, rep.Overall.TurnQuestions)
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Errorf("report does not encode as JSON: %v", err)
	}
}

// TestIngest checks the event times given to a conversation's records:
// dated sessions keep their date, undated ones follow the previous
// session, and turns are locomo.TurnGap apart.
func TestIngest(t *testing.T) {
	convs := readFixture(t)
	tests := []struct {
		conv int
		turn string
		want string
	}{
		{0, "D1:1", "2023-05-08T13:56:00Z"},
		{0, "D1:4", "2023-05-08T13:57:30Z"},
		{0, "D2:1", "2023-06-20T10:00:00Z"},
		{0, "D3:1", "2023-06-20T11:01:30Z"}, // undated: an hour after the slot of D2:3 ends
		{0, "D3:2", "2023-06-20T11:02:00Z"},
		{1, "D1:1", "2024-03-01T17:30:00Z"}, // undated first session: 23 hours before the first date
		{0, "D10:1", "2023-12-01T09:15:00Z"},
		{1, "D2:2", "2024-03-02T16:30:30Z"},
	}
	stores := map[int]map[string]engine.Record{}
	for i := range convs {
		e, err := hmo.Open(filepath.Join(t.TempDir(), "s"), nil)
		if err != nil {
			t.Fatalf("hmo.Open: %v", err)
		}
		defer e.Close()
		turnOf, err := eval.Ingest(context.Background(), e, convs[i], nil)
		if err != nil {
			t.Fatalf("Ingest %s: %v", convs[i].ID, err)
		}
		stores[i] = map[string]engine.Record{}
		for id, turn := range turnOf {
			r, err := e.Get(id)
			if err != nil {
				t.Fatalf("Get(%d): %v", id, err)
			}
			if len(r.Sources) != 1 || r.Sources[0] != turn || r.Scope != convs[i].ID {
				t.Errorf("record %d of turn %s: scope %q sources %q", id, turn, r.Scope, r.Sources)
			}
			stores[i][turn] = r
		}
	}
	for _, tt := range tests {
		r, ok := stores[tt.conv][tt.turn]
		if !ok {
			t.Errorf("conversation %d: no record for turn %s", tt.conv, tt.turn)
			continue
		}
		if got := r.Time.Format("2006-01-02T15:04:05Z07:00"); got != tt.want {
			t.Errorf("conversation %d turn %s time %s, want %s", tt.conv, tt.turn, got, tt.want)
		}
	}
	// conv-b opens with an undated session: its turns must come before the
	// dated second session, in order.
	b := stores[1]
	if !b["D1:1"].Time.Before(b["D1:3"].Time) || !b["D1:3"].Time.Before(b["D2:1"].Time) {
		t.Errorf("conv-b times D1:1 %v, D1:3 %v, D2:1 %v: want increasing", b["D1:1"].Time, b["D1:3"].Time, b["D2:1"].Time)
	}
}

func TestLoCoMoOpenError(t *testing.T) {
	convs := readFixture(t)
	_, err := eval.LoCoMo(context.Background(), convs, func(dir string, _ func() time.Time) (*engine.Engine, error) {
		return hmo.Open(dir, &engine.Options{TextWeight: 2})
	}, eval.Options{WorkDir: t.TempDir()})
	if err == nil {
		t.Fatal("LoCoMo with a bad option succeeded, want an error")
	}
	if !errors.Is(err, engine.ErrInvalidOption) {
		t.Errorf("LoCoMo error %v, want ErrInvalidOption", err)
	}
}

func allMetrics(rep *eval.Report) map[string]*eval.Metrics {
	out := map[string]*eval.Metrics{"overall": &rep.Overall}
	for k, m := range rep.ByCategory {
		out[k] = m
	}
	return out
}

func keys(m map[string]*eval.Metrics) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
