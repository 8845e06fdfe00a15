package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
	"github.com/hmo-dev/hmo/locomo"
	"github.com/hmo-dev/hmo/longmemeval"
)

const evalUsage = "usage: hmo eval locomo|longmemeval [flags] FILE (flags may also follow FILE)"

func runEval(ctx context.Context, env *env, args []string) error {
	if len(args) == 0 || (args[0] != "locomo" && args[0] != "longmemeval") {
		return usageError{evalUsage}
	}
	bench := args[0]
	fs := newFlags(env, "eval "+bench, "FILE")
	asJSON := fs.Bool("json", false, "print the report as JSON, with per-question results (usable as a --baseline later)")
	baseline := fs.String("baseline", "", "a report written earlier by --json: compare with it question by question (paired bootstrap)")
	resamples := fs.Int("resamples", eval.DefaultResamples, "bootstrap resamples for --baseline (at least 1000)")
	seed := fs.Uint64("seed", eval.DefaultSeed, "seed of the bootstrap resampling for --baseline")
	var o engine.Options
	configure := registerEngineFlags(fs, &o)
	workDir := fs.String("workdir", "", "where the temporary stores go (default the system temp dir)")
	files, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageError{fmt.Sprintf("eval %s needs one file", bench)}
	}
	if err := configure(); err != nil {
		return err
	}
	var base *eval.Report
	if *baseline != "" {
		if base, err = readBaseline(*baseline); err != nil {
			return err
		}
	}
	p := newProgress(env, "eval")
	open := func(dir string, clock func() time.Time) (*engine.Engine, error) {
		oc := o
		oc.Clock = clock
		return hmo.Open(dir, &oc)
	}
	eo := eval.Options{WorkDir: *workDir, Progress: p.update}
	var rep *eval.Report
	switch bench {
	case "locomo":
		convs, err := readLoCoMo(files[0])
		if err != nil {
			return err
		}
		rep, err = eval.LoCoMo(ctx, convs, open, eo)
	case "longmemeval":
		qs, err := readLongMemEval(files[0])
		if err != nil {
			return err
		}
		rep, err = eval.LongMemEval(ctx, qs, open, eo)
	}
	if errors.Is(err, engine.ErrInvalidOption) {
		return usageError{err.Error()} // a bad --fusion, --text-weight, ...
	}
	if err != nil {
		return err
	}
	if base != nil {
		c, err := eval.Compare(base, rep, eval.CompareOptions{Resamples: *resamples, Seed: *seed})
		if err != nil {
			return err
		}
		c.Baseline = *baseline
		rep.Comparison = c
	}
	if *asJSON {
		return writeJSON(env, rep)
	}
	if err := eval.WriteTable(env.stdout, rep); err != nil {
		return err
	}
	if rep.Comparison != nil {
		fmt.Fprintln(env.stdout)
		return eval.WriteComparison(env.stdout, rep.Comparison)
	}
	return nil
}

// registerEngineFlags registers the retrieval settings an evaluation can
// vary; the function it returns checks them and fills in o.
func registerEngineFlags(fs *flag.FlagSet, o *engine.Options) func() error {
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
	return func() error {
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
		return nil
	}
}

// parseInterspersed parses flags that may come before, between or after
// the positional arguments, which it returns; "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parse(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
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
