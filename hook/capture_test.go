package hook_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/capture"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/hook"
)

// TestRecordedSessionIsClean reproduces issue 12 on a recorded session
// (testdata/session.jsonl): after the hooks, the store held "No response
// requested.", "check memory", "done" and "which database do we use?"
// twice, ignored the compaction summary, and ranked the question above
// the decision for "database decision". Every hook runs twice (Claude
// Code fires Stop after every turn) against a real store.
func TestRecordedSessionIsClean(t *testing.T) {
	e := newEnv(t)
	data, err := os.ReadFile("testdata/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	e.write(t, data)
	// The product's defaults (embedded embedder, tiered mode): ranking is
	// part of what is checked.
	st, err := hmo.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := api.NewLocal(st)
	for range 2 {
		for _, ev := range []string{hook.EventStop, hook.EventPreCompact, hook.EventPostCompact, hook.EventSessionEnd} {
			if _, err := e.run(t, ev, e.payload(t, ev), svc); err != nil {
				t.Fatalf("%s: %v", ev, err)
			}
		}
		if err := os.RemoveAll(e.opts.StateDir); err != nil { // as after a crash: ingest all again
			t.Fatal(err)
		}
	}
	var all []api.Memory
	req := api.ListRequest{Limit: 100}
	for {
		res, err := svc.List(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, res.Memories...)
		if res.NextCursor == "" {
			break
		}
		req.Cursor = res.NextCursor
	}
	noise := []string{"check memory", "done", "ok thanks", "no response requested."}
	seen := map[string]uint64{}
	summaries, facts := 0, 0
	for _, m := range all {
		n := engine.NormalizeText(m.Text)
		for _, w := range noise {
			if n == w {
				t.Errorf("noise stored: #%d %s %q", m.ID, m.Role, m.Text)
			}
		}
		if id, ok := seen[n]; ok {
			t.Errorf("stored twice: #%d and #%d %q", id, m.ID, m.Text)
		}
		seen[n] = m.ID
		switch m.Role {
		case hook.RoleSummary:
			summaries++
			if m.Session != recordedSession || m.Scope != e.repo || !strings.Contains(m.Text, "Postgres 16 on the NAS") {
				t.Errorf("summary %+v: want the payload's summary in the session and project", m)
			}
		case hook.RoleFact:
			facts++
			if len(m.Sources) != 2 || !strings.HasPrefix(m.Sources[1], m.Sources[0]+"#f") {
				t.Errorf("fact #%d sources %v: want its turn and the turn's fact label", m.ID, m.Sources)
			}
		}
	}
	if summaries != 1 || facts == 0 {
		t.Errorf("%d summaries and %d facts stored, want 1 and some", summaries, facts)
	}
	for _, m := range all {
		t.Logf("#%d %-9s %q %v", m.ID, m.Role, m.Text, m.Sources)
	}
	res, err := svc.Search(context.Background(), api.SearchRequest{Query: "database decision", K: 3, Filter: api.Filter{Scope: e.repo}})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range res.Results {
		t.Logf("database decision %d: %.3f %s %q", i+1, m.Score, m.Role, m.Text)
	}
	if len(res.Results) == 0 || !strings.Contains(res.Results[0].Text, "decided on Postgres 16") {
		t.Errorf("\"database decision\" ranks first %+v, want the decision", res.Results)
	}
}

// modelDistiller stands for a chat model's facts step.
type modelDistiller struct{}

func (modelDistiller) DistillFacts(_ context.Context, text string) ([]capture.Fact, error) {
	if !strings.Contains(text, "Postgres 16") {
		return nil, nil
	}
	return []capture.Fact{{Kind: capture.KindDecision, Text: "Decision: the tide database is Postgres 16."}}, nil
}

// TestIngestWithModelDistiller: with a chat model configured, the hook
// stores the model's facts, linked to their turn.
func TestIngestWithModelDistiller(t *testing.T) {
	e := newEnv(t)
	data, err := os.ReadFile("testdata/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	e.write(t, data)
	e.opts.Distiller = modelDistiller{}
	svc := &fakeService{}
	if _, err := e.run(t, hook.EventStop, e.payload(t, hook.EventStop), svc); err != nil {
		t.Fatal(err)
	}
	var facts []api.Memory
	for _, m := range svc.mems {
		if m.Role == hook.RoleFact {
			facts = append(facts, m)
		}
	}
	if len(facts) != 1 || facts[0].Text != "Decision: the tide database is Postgres 16." ||
		facts[0].Sources[0] != "claude-code:d0000000-0000-4000-8000-000000000004" {
		t.Errorf("facts %+v, want the model's one fact linked to its turn", facts)
	}
}
