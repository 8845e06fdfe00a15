// Command ablate runs LoCoMo retrieval with sets of pipeline stages and
// prints one JSON line per run (overall and per-category turn Recall@10,
// median latency), and a paired bootstrap interval of each run's R@10
// against the first run. It feeds the ablation table of BENCHMARKS.md:
//
//	go run ./tools/ablate -data ../shared/data/locomo-dev.json -mode flat \
//	    'baseline=none,text,vector' 'speaker=none,text,vector,speaker' ...
//
// Each argument is NAME=STAGES, STAGES as retrieve.ParseStages reads it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
	"github.com/hmo-dev/hmo/fts"
	"github.com/hmo-dev/hmo/locomo"
)

var (
	prfDocs int
	shape   = flag.Bool("shape", false, "print the segment tree's size per conversation")
	profile *os.File
	opts    engine.Options
	scoring fts.Scoring
)

type row struct {
	Name     string             `json:"name"`
	Stages   string             `json:"stages"`
	Mode     string             `json:"mode"`
	R10      float64            `json:"r10"`
	ByCat    map[string]float64 `json:"by_category"`
	MedianMS float64            `json:"median_ms"`
	// Delta is R@10 minus the first run's, with its 95% paired
	// bootstrap interval over questions.
	Delta   float64    `json:"delta"`
	DeltaCI [2]float64 `json:"delta_ci"`
	per     []float64
}

func main() {
	data := flag.String("data", "../shared/data/locomo-dev.json", "LoCoMo file")
	mode := flag.String("mode", "flat", "flat or tiered")
	seed := flag.Uint64("seed", 1, "bootstrap seed")
	flag.Float64Var(&opts.Priors.Speaker, "speaker", 0, "speaker prior weight (0: default)")
	flag.Float64Var(&opts.Priors.Time, "time", 0, "time prior weight (0: default)")
	flag.Float64Var(&opts.Priors.Session, "session", 0, "session prior weight (0: default)")
	flag.Float64Var(&opts.TextWeight, "text-weight", 0, "lexical share of linear fusion (0: default)")
	flag.Float64Var(&opts.Priors.WordSim, "wordsim", 0, "wordsim prior weight (0: default)")
	flag.IntVar(&opts.Candidates, "candidates", 0, "candidates per generator (0: default)")
	flag.Float64Var(&scoring.K1, "k1", 0, "BM25 k1 (0: default)")
	flag.Float64Var(&scoring.B, "b", 0, "BM25 b (0: default)")
	flag.Float64Var(&scoring.ContextWeight, "context-weight", 0, "BM25F weight of the context turn (0: default)")
	flag.Float64Var(&scoring.RoleWeight, "role-weight", 0, "BM25F weight of the role (0: default)")
	flag.Float64Var(&opts.SegTree.Threshold, "threshold", 0, "segment tree NONE threshold (0: default)")
	flag.Float64Var(&opts.Propagation.Alpha, "alpha", 0, "propagation decay (0: default)")
	flag.IntVar(&prfDocs, "prf-docs", 0, "feedback records (0: default)")
	perq := flag.String("per-question", "", "write each run's per-question R@10 to FILE.NAME.json (paired comparisons across builds)")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the queries to this file")
	flag.Parse()
	if *prof != "" {
		pf, err := os.Create(*prof)
		if err != nil {
			fail(err)
		}
		defer pf.Close()
		profile = pf
	}
	f, err := os.Open(*data)
	if err != nil {
		fail(err)
	}
	convs, err := locomo.Read(f)
	f.Close()
	if err != nil {
		fail(err)
	}
	var base *row
	for _, arg := range flag.Args() {
		name, stages, ok := strings.Cut(arg, "=")
		if !ok {
			fail(fmt.Errorf("argument %q: want NAME=STAGES", arg))
		}
		r, err := runOne(convs, *mode, stages)
		if err != nil {
			fail(err)
		}
		r.Name = name
		if base == nil {
			base = r
		}
		r.Delta, r.DeltaCI = bootstrap(base.per, r.per, *seed)
		if *perq != "" {
			b, _ := json.Marshal(r.per)
			if err := os.WriteFile(*perq+"."+r.Mode+"."+strings.ReplaceAll(name, " ", "_")+".json", b, 0o600); err != nil {
				fail(err)
			}
		}
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
	}
}

func runOne(convs []locomo.Conversation, mode, stages string) (*row, error) {
	ctx := context.Background()
	work, err := os.MkdirTemp("", "hmo-ablate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	r := &row{Stages: stages, Mode: mode, ByCat: map[string]float64{}}
	n := map[string]int{}
	var lat []time.Duration
	for i, c := range convs {
		clock := &eval.Clock{}
		e, err := hmo.Open(filepath.Join(work, fmt.Sprint(i)), func() *engine.Options {
			o := opts
			o.Clock, o.Mode, o.Stages = clock.Now, engine.Mode(mode), stages
			o.PRF.Docs = prfDocs
			fo := &fts.Options{Scoring: scoring}
			o.OpenTextIndex = func(dir string) (engine.TextIndex, error) { return fts.Open(dir, fo) }
			o.NewTierTextIndex = func() (engine.TextIndex, error) { return fts.NewMemoryWith(fo) }
			return &o
		}())
		if err != nil {
			return nil, err
		}
		turnOf, err := eval.Ingest(ctx, e, c, clock)
		if err != nil {
			e.Close()
			return nil, err
		}
		if *shape {
			sums, err := e.SegmentSummaries()
			if err != nil {
				fail(err)
			}
			fmt.Fprintf(os.Stderr, "%s: %d records, %d segments\n", c.ID, len(turnOf), len(sums))
		}
		if profile != nil && i == 0 {
			pprof.StartCPUProfile(profile)
		}
		for _, q := range c.QA {
			if q.Category == locomo.Adversarial || len(q.Evidence) == 0 {
				continue
			}
			start := time.Now()
			res, err := e.Recall(ctx, engine.Query{Text: q.Question, K: 10, Scope: c.ID})
			if err != nil {
				e.Close()
				return nil, err
			}
			lat = append(lat, time.Since(start))
			ranked := make([]string, len(res))
			for j, x := range res {
				ranked[j] = turnOf[x.Record.ID]
			}
			v := eval.Score(ranked, q.Evidence).TurnRecall[10]
			r.per = append(r.per, v)
			cat := locomo.CategoryName(q.Category)
			r.ByCat[cat] += v
			n[cat]++
		}
		if profile != nil && i == len(convs)-1 {
			pprof.StopCPUProfile()
		}
		e.Close()
	}
	for k := range r.ByCat {
		r.ByCat[k] /= float64(n[k])
	}
	for _, v := range r.per {
		r.R10 += v
	}
	r.R10 /= float64(len(r.per))
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r.MedianMS = float64(lat[len(lat)/2].Microseconds()) / 1000
	return r, nil
}

// bootstrap returns the mean of b - a over paired questions and its 95%
// percentile interval from 2000 resamples.
func bootstrap(a, b []float64, seed uint64) (float64, [2]float64) {
	if len(a) != len(b) || len(a) == 0 {
		return 0, [2]float64{}
	}
	d := make([]float64, len(a))
	var mean float64
	for i := range a {
		d[i] = b[i] - a[i]
		mean += d[i]
	}
	mean /= float64(len(d))
	rng := rand.New(rand.NewPCG(seed, 0))
	const rounds = 2000
	means := make([]float64, rounds)
	for r := range means {
		var s float64
		for range d {
			s += d[rng.IntN(len(d))]
		}
		means[r] = s / float64(len(d))
	}
	sort.Float64s(means)
	return mean, [2]float64{means[rounds*25/1000], means[rounds*975/1000]}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ablate:", err)
	os.Exit(1)
}
