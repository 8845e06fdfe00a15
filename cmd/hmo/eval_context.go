package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
)

// contextFlags measure memory_context blocks and HyMem's paths beside
// recall (xMemory and HyMem, issue 10).
type contextFlags struct {
	budget          int
	minScore, hyCov float64
}

func (c *contextFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&c.budget, "context-budget", 0, "also measure memory_context blocks of this many tokens: all-evidence-in-context rate and mean tokens per assembly, and HyMem's light/deep paths (0: off)")
	fs.Float64Var(&c.minScore, "context-min-score", 0, "relevance floor of the measured blocks (0: memory_context's default, negative: none)")
	fs.Float64Var(&c.hyCov, "hymem-min-coverage", 0, "HyMem light path: sufficient when a summary covers this share of the query's terms (score test, any number of matches); 0: the engine's sufficiency")
}

func (c *contextFlags) apply(o *eval.Options) {
	o.ContextBudget, o.ContextMinScore = c.budget, c.minScore
	if c.hyCov != 0 {
		o.HyMemSufficiency = engine.ScoreTest{MinCoverage: c.hyCov, MaxMatches: -1}
	}
}

// printContext prints the context and HyMem figures of a run that
// measured them.
func printContext(w io.Writer, rep *eval.Report) {
	if c := rep.Context; c != nil {
		fmt.Fprintf(w, "\nmemory_context at %d tokens (min score %g)\n%-8s %10s %8s %8s %8s %8s\n", c.Budget, c.MinScore, "assembly", "all-evid", "tokens", "records", "p50 ms", "max ms")
		for _, a := range c.Assemblies {
			fmt.Fprintf(w, "%-8s %10.3f %8.0f %8.1f %8.2f %8.1f\n", a.Assembly, a.AllEvidence, a.MeanTokens, a.MeanRecords, a.MedianMS, a.MaxMS)
		}
		for _, d := range c.Paired {
			fmt.Fprintf(w, "paired %s - %s %s: %+.3f [%+.3f, %+.3f]\n", d.Run, d.Base, d.Metric, d.Diff, d.CI95[0], d.CI95[1])
		}
	}
	if h := rep.HyMem; h != nil {
		fmt.Fprintf(w, "hymem: %.3f of %d questions stay on the light path (%.0f tokens, all-evidence %.3f); deep %.0f tokens, %.2f rounds, all-evidence %.3f; overall %.0f tokens, all-evidence %.3f\n",
			h.LightShare, h.Questions, h.LightTokens, h.LightAllEvidence, h.DeepTokens, h.DeepRounds, h.DeepAllEvidence, h.MeanTokens, h.AllEvidence)
	}
}
