package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
	"github.com/hmo-dev/hmo/locomo"
	"github.com/hmo-dev/hmo/longmemeval"
	"github.com/hmo-dev/hmo/retrieve"
)

// evalUsage is the usage line of eval without a known benchmark.
const evalUsage = "usage: hmo eval locomo|longmemeval [flags] FILE"

func newEvalCmd(env *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval <benchmark> [flags] FILE",
		Short: "measure retrieval on a benchmark (locomo, longmemeval)",
		Example: `  hmo eval locomo ../shared/data/locomo-dev.json
  hmo eval locomo ../shared/data/locomo-dev.json --json --mode flat > base.json
  hmo eval locomo ../shared/data/locomo-dev.json --mode tiered --baseline base.json
  hmo eval longmemeval testdata/longmemeval-small.json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return usageError{evalUsage} },
	}
	cmd.AddCommand(newEvalBenchCmd(env, "locomo", "turn and session recall and latency on LoCoMo conversations",
		`  hmo eval locomo ../shared/data/locomo-dev.json
  hmo eval locomo locomo.json --json --only text --workdir /tmp`))
	cmd.AddCommand(newEvalBenchCmd(env, "longmemeval", "turn and session recall, session NDCG and latency on LongMemEval questions (_s, _m or _oracle files)",
		`  hmo eval longmemeval longmemeval_s.json --json
  hmo eval longmemeval testdata/longmemeval-small.json --mode flat`))
	return cmd
}

func newEvalBenchCmd(env *env, bench, short, example string) *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:     bench + " [flags] FILE",
		Short:   short,
		Example: example,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Sprintf("eval %s needs one file", bench)}
			}
			return runEvalBench(cmd.Context(), env, bench, args[0], &f)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

// evalFlags are the flags of hmo eval: the report, the comparison, and
// the retrieval settings an evaluation can vary.
type evalFlags struct {
	asJSON, gateOff        bool
	baseline, workDir      string
	resamples, maxMatches  int
	seed                   uint64
	fusion, only, mode     string
	minCoverage, minCosine float64
	o                      engine.Options
	ctx                    contextFlags
}

func (f *evalFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON, with per-question results (usable as a --baseline later)")
	fs.StringVar(&f.baseline, "baseline", "", "a report written earlier by --json: compare with it question by question (paired bootstrap)")
	fs.IntVar(&f.resamples, "resamples", eval.DefaultResamples, "bootstrap resamples for --baseline (at least 1000)")
	fs.Uint64Var(&f.seed, "seed", eval.DefaultSeed, "seed of the bootstrap resampling for --baseline")
	fs.StringVar(&f.workDir, "workdir", "", "where the temporary stores go (default the system temp dir)")
	fs.StringVar(&f.fusion, "fusion", string(engine.DefaultFusion), "fusion of lexical and vector results: linear or rrf")
	fs.Float64Var(&f.o.TextWeight, "text-weight", engine.DefaultTextWeight, "weight of BM25 in linear fusion")
	fs.Float64Var(&f.o.Priors.Answer, "answer-weight", retrieve.DefaultAnswerWeight, "weight of the answer prior (answer stage), a share of the best fused score")
	fs.Float64Var(&f.o.Opener.Weight, "opener-weight", retrieve.DefaultOpenerWeight, "prior of the turn that opens a session, for a question asking for a set (opener stage), a share of the best score")
	fs.IntVar(&f.o.Cover.PerSession, "cover-per-session", retrieve.DefaultCoverPerSession, "turns of one session among the first results of a question asking for a set (cover stage)")
	fs.IntVar(&f.o.IndexContext, "context", engine.DefaultIndexContext, "previous turns indexed with each turn (-1 for none)")
	fs.IntVar(&f.o.Candidates, "candidates", engine.DefaultCandidates, "candidates drawn from each index")
	fs.BoolVar(&f.o.NoIndexRole, "no-role", false, "leave the speaker out of the indexed text")
	fs.StringVar(&f.only, "only", "hybrid", "hybrid, text or vector")
	fs.StringVar(&f.mode, "mode", string(engine.DefaultMode), "tiered (HMO walk, in-situ stream) or flat (exhaustive)")
	fs.IntVar(&f.o.Tiers.Tier1Cap, "tier1", 0, "Tier-1 cap in records (default: the tiers package default)")
	fs.IntVar(&f.o.Tiers.Tier2Cap, "tier2", 0, "Tier-2 cap in records (default: the tiers package default)")
	fs.Float64Var(&f.minCoverage, "min-coverage", engine.DefaultMinCoverage, "sufficiency: lexical coverage of the query by a tier's best hit that stops the walk, in (0, 1]; above 1 never stops")
	fs.Float64Var(&f.minCosine, "min-cos", 0, "sufficiency: cosine of a tier's best hit also required to stop the walk (0: none)")
	fs.IntVar(&f.maxMatches, "max-matches", engine.DefaultMaxMatches, "sufficiency: results that may reach --min-coverage, and tier records that may hold every term, for the walk to stop (-1: any number)")
	fs.BoolVar(&f.gateOff, "gate-off", false, "re-score on every persona change (drift gate ablation)")
	fs.StringVar(&f.o.Stages, "stages", "", fmt.Sprintf(`retrieval pipeline stages, applied in order to the default set (%s): "name" or "+name" adds one, "-name" removes one, "none" empties the set, "default" restores it; e.g. "-segtree" or "none,text,vector,speaker"; stages: %s`,
		retrieve.DefaultStages, strings.Join(retrieve.StageNames(), ", ")))
	f.ctx.register(fs)
}

// options returns the engine options the flags ask for.
func (f *evalFlags) options() (engine.Options, error) {
	o := f.o
	o.Fusion = engine.Fusion(f.fusion)
	o.Mode = engine.Mode(f.mode)
	o.Sufficiency = engine.ScoreTest{MinCoverage: f.minCoverage, MinCosine: f.minCosine, MaxMatches: f.maxMatches}
	o.Persona.GateOff = f.gateOff
	if _, err := retrieve.ParseStages(f.o.Stages); err != nil {
		return o, usageError{fmt.Sprintf("--stages %q: %v", f.o.Stages, err)}
	}
	switch f.only {
	case "hybrid":
	case "text":
		o.NoVector = true
	case "vector":
		o.NoText = true
	default:
		return o, usageError{fmt.Sprintf("--only %q: want hybrid, text or vector", f.only)}
	}
	return o, nil
}

// runEvalBench runs benchmark bench on file and prints the report.
func runEvalBench(ctx context.Context, env *env, bench, file string, f *evalFlags) error {
	o, err := f.options()
	if err != nil {
		return err
	}
	var base *eval.Report
	if f.baseline != "" {
		if base, err = readBaseline(f.baseline); err != nil {
			return err
		}
	}
	p := newProgress(env, "eval")
	open := func(dir string, clock func() time.Time) (*engine.Engine, error) {
		oc := o
		oc.Clock = clock
		return hmo.Open(dir, &oc)
	}
	eo := eval.Options{WorkDir: f.workDir, Progress: p.update}
	f.ctx.apply(&eo)
	var rep *eval.Report
	switch bench {
	case "locomo":
		var convs []locomo.Conversation
		if convs, err = readLoCoMo(file); err == nil {
			rep, err = eval.LoCoMo(ctx, convs, open, eo)
		}
	case "longmemeval":
		var qs []longmemeval.Question
		if qs, err = readLongMemEval(file); err == nil {
			rep, err = eval.LongMemEval(ctx, qs, open, eo)
		}
	default:
		return usageError{evalUsage}
	}
	if errors.Is(err, engine.ErrInvalidOption) {
		return usageError{err.Error()} // a bad --fusion, --text-weight, ...
	}
	if err != nil {
		return err
	}
	if base != nil {
		c, err := eval.Compare(base, rep, eval.CompareOptions{Resamples: f.resamples, Seed: f.seed})
		if err != nil {
			return err
		}
		c.Baseline = f.baseline
		rep.Comparison = c
	}
	if f.asJSON {
		return writeJSON(env, rep)
	}
	if err := eval.WriteTable(env.stdout, rep); err != nil {
		return err
	}
	printContext(env.stdout, rep)
	if rep.Comparison != nil {
		fmt.Fprintln(env.stdout)
		return eval.WriteComparison(env.stdout, rep.Comparison)
	}
	return nil
}

func readLoCoMo(name string) ([]locomo.Conversation, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return locomo.Read(f)
}

func readLongMemEval(name string) ([]longmemeval.Question, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return longmemeval.Read(f)
}

func readBaseline(name string) (*eval.Report, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	defer f.Close()
	rep, err := eval.ReadReport(f)
	if err != nil {
		return nil, fmt.Errorf("--baseline %s: %w", name, err)
	}
	return rep, nil
}
