package eval_test

import (
	"context"
	"testing"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
)

// TestContextBudget: a run with a context budget measures every assembly
// and HyMem for every question, within the budget, and pairs each
// assembly with the two top-k baselines.
func TestContextBudget(t *testing.T) {
	convs := readFixture(t)
	open := func(dir string, clock func() time.Time) (*engine.Engine, error) {
		return hmo.Open(dir, &engine.Options{Clock: clock})
	}
	for _, budget := range []int{60, 1500} {
		rep, err := eval.LoCoMo(context.Background(), convs, open, eval.Options{WorkDir: t.TempDir(), ContextBudget: budget, ContextMinScore: -1})
		if err != nil {
			t.Fatal(err)
		}
		c := rep.Context
		if c == nil || rep.HyMem == nil {
			t.Fatal("no context or hymem report")
		}
		if len(c.Assemblies) != len(eval.ContextAssemblies) {
			t.Fatalf("%d assemblies measured, want %d", len(c.Assemblies), len(eval.ContextAssemblies))
		}
		for _, a := range c.Assemblies {
			if a.AllEvidence < 0 || a.AllEvidence > 1 || a.MeanTokens <= 0 || a.MeanTokens > float64(budget) {
				t.Errorf("budget %d, %s: all-evidence %v, tokens %v", budget, a.Assembly, a.AllEvidence, a.MeanTokens)
			}
		}
		// ranked and topk are the bases: topk vs ranked, then two pairs
		// (all-evidence and tokens) for each of the other two bases.
		if want := 2 * (1 + 2*(len(eval.ContextAssemblies)-2)); len(c.Paired) != want {
			t.Errorf("%d paired differences, want %d", len(c.Paired), want)
		}
		for _, q := range rep.Questions {
			if _, ok := q.Metrics["context_all_evidence_themes"]; !ok {
				t.Fatalf("question %s lacks its context metrics: %v", q.ID, q.Metrics)
			}
		}
		if h := rep.HyMem; h.Questions != len(rep.Questions) || h.MeanTokens > float64(budget) || h.LightShare < 0 || h.LightShare > 1 {
			t.Errorf("hymem report %+v for %d questions", h, len(rep.Questions))
		}
	}
	big, err := eval.LoCoMo(context.Background(), convs, open, eval.Options{WorkDir: t.TempDir(), ContextBudget: 1500, ContextMinScore: -1})
	if err != nil {
		t.Fatal(err)
	}
	small, _ := eval.LoCoMo(context.Background(), convs, open, eval.Options{WorkDir: t.TempDir(), ContextBudget: 60, ContextMinScore: -1})
	if big.Context.Assemblies[0].AllEvidence < small.Context.Assemblies[0].AllEvidence {
		t.Errorf("a larger budget holds less evidence: %v < %v", big.Context.Assemblies[0].AllEvidence, small.Context.Assemblies[0].AllEvidence)
	}
}
