package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
	"github.com/hmo-dev/hmo/locomo"
)

// evalUsage is the usage line of eval without a known benchmark.
const evalUsage = "usage: hmo eval locomo [flags] FILE"

func newEvalCmd(env *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval <benchmark> [flags] FILE",
		Short: "measure retrieval on a benchmark (locomo)",
		Example: `  hmo eval locomo ../shared/data/locomo-dev.json
  hmo eval locomo ../shared/data/locomo-dev.json --json --mode flat`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return usageError{evalUsage} },
	}
	cmd.AddCommand(newEvalLoCoMoCmd(env))
	return cmd
}

func newEvalLoCoMoCmd(env *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "locomo [flags] FILE",
		Short: "turn recall, session recall and latency on LoCoMo conversations",
		Example: `  hmo eval locomo ../shared/data/locomo-dev.json
  hmo eval locomo locomo.json --json --only text --workdir /tmp`,
	}
	fs := cmd.Flags()
	asJSON := fs.Bool("json", false, "print the report as JSON")
	var o engine.Options
	fusion := fs.String("fusion", string(engine.DefaultFusion), "fusion of lexical and vector results: linear or rrf")
	fs.Float64Var(&o.TextWeight, "text-weight", engine.DefaultTextWeight, "weight of BM25 in linear fusion")
	fs.IntVar(&o.IndexContext, "context", engine.DefaultIndexContext, "previous turns indexed with each turn (-1 for none)")
	fs.IntVar(&o.Candidates, "candidates", engine.DefaultCandidates, "candidates drawn from each index")
	fs.BoolVar(&o.NoIndexRole, "no-role", false, "leave the speaker out of the indexed text")
	only := fs.String("only", "hybrid", "hybrid, text or vector")
	mode := fs.String("mode", string(engine.DefaultMode), "tiered (HMO walk, in-situ stream) or flat (exhaustive)")
	fs.IntVar(&o.Tiers.Tier1Cap, "tier1", 0, "Tier-1 cap in records (default: the tiers package default)")
	fs.IntVar(&o.Tiers.Tier2Cap, "tier2", 0, "Tier-2 cap in records (default: the tiers package default)")
	minCov := fs.Float64("min-coverage", engine.DefaultMinCoverage, "sufficiency: lexical coverage of the query by a tier's best hit that stops the walk, in (0, 1]; above 1 never stops")
	minCos := fs.Float64("min-cos", 0, "sufficiency: cosine of a tier's best hit also required to stop the walk (0: none)")
	maxMatches := fs.Int("max-matches", engine.DefaultMaxMatches, "sufficiency: results that may reach --min-coverage for the walk to stop (-1: any number)")
	gateOff := fs.Bool("gate-off", false, "re-score on every persona change (drift gate ablation)")
	workDir := fs.String("workdir", "", "where the temporary stores go (default the system temp dir)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageError{"eval locomo needs one file"}
		}
		ctx := cmd.Context()
		o.Fusion = engine.Fusion(*fusion)
		o.Mode = engine.Mode(*mode)
		o.Sufficiency = engine.ScoreTest{MinCoverage: *minCov, MinCosine: *minCos, MaxMatches: *maxMatches}
		o.Persona.GateOff = *gateOff
		switch *only {
		case "hybrid":
		case "text":
			o.NoVector = true
		case "vector":
			o.NoText = true
		default:
			return usageError{fmt.Sprintf("--only %q: want hybrid, text or vector", *only)}
		}
		convs, err := readLoCoMo(args[0])
		if err != nil {
			return err
		}
		p := newProgress(env, "eval")
		open := func(dir string, clock func() time.Time) (*engine.Engine, error) {
			oc := o
			oc.Clock = clock
			return hmo.Open(dir, &oc)
		}
		rep, err := eval.LoCoMo(ctx, convs, open,
			eval.LoCoMoOptions{WorkDir: *workDir, Progress: p.update})
		if errors.Is(err, engine.ErrInvalidOption) {
			return usageError{err.Error()} // a bad --fusion, --text-weight, ...
		}
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(env, rep)
		}
		printReport(env, rep)
		return nil
	}
	return cmd
}

func readLoCoMo(name string) ([]locomo.Conversation, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return locomo.Read(f)
}

func printReport(env *env, rep *eval.Report) {
	w := env.stdout
	fmt.Fprintf(w, "%d conversations, %d records, %d questions (%d without evidence skipped)\n",
		rep.Conversations, rep.Records, rep.Overall.Questions, rep.Skipped)
	fmt.Fprintf(w, "%-12s %6s %6s %6s %6s %8s %8s\n", "category", "n", "R@5", "R@10", "R@20", "hit@10", "sessR@5")
	row := func(name string, m *eval.Metrics) {
		fmt.Fprintf(w, "%-12s %6d %6.3f %6.3f %6.3f %6.3f %8.3f\n", name, m.Questions,
			m.TurnRecall[5], m.TurnRecall[10], m.TurnRecall[20], m.AllHit10, m.SessionRecall)
	}
	names := make([]string, 0, len(rep.ByCategory))
	for n := range rep.ByCategory {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		row(n, rep.ByCategory[n])
	}
	row("overall", &rep.Overall)
	fmt.Fprintf(w, "latency per query: median %.2f ms, p99 %.2f ms; ingest %.1f s\n", rep.MedianLatencyMS, rep.P99LatencyMS, rep.IngestSeconds)
	fmt.Fprintf(w, "importance AUC (I0, evidence turns vs the rest): %.3f\n", rep.ImportanceAUC)
	if t := rep.Tiers; t != nil {
		fmt.Fprintf(w, "tiers: %d queries served by tier 1/2/3: %d/%d/%d (tier-3 share %.2f); %.0f candidates scored per query; %d gate firings\n",
			t.Queries, t.Served[1], t.Served[2], t.Served[3], t.Tier3Share, t.CandidatesPerQuery, t.GateFirings)
	}
}
