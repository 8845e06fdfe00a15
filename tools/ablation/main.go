// Command ablation measures retrieval with pipeline stages switched on
// and off: each variant is one "hmo eval" run, in each mode, and every
// variant is compared with the first (paired bootstrap, question by
// question). It writes, under -out:
//
//	NAME.json         every variant's figures, overall and per category
//	NAME.md           a markdown table per mode: Recall@10 per category,
//	                  the other metrics overall, the paired difference of
//	                  Recall@10 against the first variant, and latency
//	NAME-MODE.plot.json  a tools/plot spec per mode (Recall@10 per category)
//
// The default variants are the candidate stages together (the baseline)
// and alone, each other stage alone on top of that baseline, the default
// pipeline, every stage on, and the default without each other stage
// (compared with the default):
//
//	go build -o bin/hmo ./cmd/hmo
//	go run ./tools/ablation -data ../shared/data/locomo-dev.json -out docs
//	for f in docs/ablation-*.plot.json; do go run ./tools/plot < $f > ${f%.plot.json}.svg; done
//
// ("make ablation" does all three.) Other variants are given as
// arguments NAME=FLAGS, FLAGS being hmo eval flags separated by spaces;
// the first is the baseline, and NAME@OTHER=FLAGS compares with the
// earlier variant OTHER instead. With -rounds N the variants run N times,
// interleaved, and latency is the median of the runs' medians.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hmo-dev/hmo/eval"
	"github.com/hmo-dev/hmo/retrieve"
)

// variant is one configuration to measure.
type variant struct {
	Name  string   `json:"name"`
	Flags []string `json:"flags"` // hmo eval flags
	// Against names the earlier variant this one is compared with; empty
	// means the first.
	Against string `json:"against,omitempty"`
}

// Row is one variant's figures in one mode.
type Row struct {
	Mode      string                        `json:"mode"`
	Name      string                        `json:"name"`
	Flags     string                        `json:"flags"`
	Against   string                        `json:"against,omitempty"` // the variant Delta compares with
	Questions int                           `json:"questions"`
	Overall   map[string]float64            `json:"overall"`     // metric name -> mean
	Category  map[string]map[string]float64 `json:"by_category"` // category -> metric name -> mean
	// MedianMS is the median over rounds of each run's median latency
	// per query; P99MS likewise.
	MedianMS float64   `json:"median_latency_ms"`
	P99MS    float64   `json:"p99_latency_ms"`
	RunsMS   []float64 `json:"run_medians_ms"`
	// Delta holds, per group ("overall" and each category), the paired
	// difference of Recall@10 against the variant Against names (the
	// mode's first variant when empty); absent for the first variant.
	Delta map[string]eval.Interval `json:"delta_r10,omitempty"`
	p99s  []float64
}

// Result is what NAME.json holds.
type Result struct {
	Benchmark string   `json:"benchmark"`
	Data      string   `json:"data"`
	Baseline  string   `json:"baseline"` // the first variant's name
	Rounds    int      `json:"rounds"`
	Seed      uint64   `json:"seed"`
	Modes     []string `json:"modes"`
	Rows      []*Row   `json:"rows"`
}

// runner runs hmo with args and returns its standard output.
type runner func(args []string) ([]byte, error)

type config struct {
	bench, data, out, name, workDir string
	modes                           []string
	rounds                          int
	seed                            uint64
	variants                        []variant
	progress                        io.Writer
}

func main() {
	var c config
	bin := flag.String("hmo", "bin/hmo", "the hmo binary")
	flag.StringVar(&c.bench, "bench", "locomo", "benchmark: locomo or longmemeval")
	flag.StringVar(&c.data, "data", "../shared/data/locomo-dev.json", "the benchmark file")
	modes := flag.String("modes", "flat,tiered", "recall modes, comma-separated")
	candidates := flag.String("candidates", "text,vector", "candidate stages: each alone, then together as the baseline")
	stages := flag.String("stages", strings.Join(otherStages([]string{"text", "vector"}), ","), "the other stages: each alone on top of the candidates (default: every stage of the retrieve package but the candidates)")
	without := flag.Bool("without", true, "also the default pipeline without each of -stages, compared with the default")
	flag.IntVar(&c.rounds, "rounds", 1, "times each variant runs, interleaved (latency is the median)")
	flag.Uint64Var(&c.seed, "seed", eval.DefaultSeed, "bootstrap seed")
	flag.StringVar(&c.out, "out", "docs", "directory of the output files")
	flag.StringVar(&c.name, "name", "ablation", "base name of the output files")
	flag.StringVar(&c.workDir, "workdir", "", "where hmo eval puts its temporary stores")
	flag.Parse()
	c.modes = split(*modes)
	c.progress = os.Stderr
	var err error
	if flag.NArg() > 0 {
		c.variants, err = parseVariants(flag.Args())
	} else {
		c.variants = defaultVariants(split(*candidates), split(*stages), *without)
	}
	if err == nil {
		err = c.run(func(args []string) ([]byte, error) {
			cmd := exec.Command(*bin, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				return nil, fmt.Errorf("%s %s: %v: %s", *bin, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
			}
			return out, nil
		})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ablation:", err)
		os.Exit(1)
	}
}

// otherStages lists the retrieve package's stages that are not candidates.
func otherStages(candidates []string) []string {
	var out []string
	for _, s := range retrieve.StageNames() {
		if !slices.Contains(candidates, s) {
			out = append(out, s)
		}
	}
	return out
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// defaultVariants: the candidates together (first: the baseline), each
// candidate stage alone, each other stage on top of the candidates, the
// default pipeline, everything on and, with without, the default
// without each other stage (compared with the default: what the stage
// adds to the combination; a stage the default lacks gives the default).
func defaultVariants(candidates, stages []string, without bool) []variant {
	base := "none," + strings.Join(candidates, ",")
	vs := []variant{{"candidates (" + strings.Join(candidates, "+") + ")", []string{"--stages=" + base}, ""}}
	for _, c := range candidates {
		vs = append(vs, variant{c + " only", []string{"--stages=none," + c}, ""})
	}
	for _, s := range stages {
		vs = append(vs, variant{"+ " + s, []string{"--stages=" + base + "," + s}, ""})
	}
	vs = append(vs, variant{"default", nil, ""})
	if len(stages) > 0 {
		vs = append(vs, variant{"all stages", []string{"--stages=" + base + "," + strings.Join(stages, ",")}, ""})
	}
	if without {
		for _, s := range stages {
			vs = append(vs, variant{"default − " + s, []string{"--stages=-" + s}, "default"})
		}
	}
	return vs
}

// parseVariants reads NAME=FLAGS, or NAME@OTHER=FLAGS to compare with
// the earlier variant OTHER instead of the first.
func parseVariants(args []string) ([]variant, error) {
	var vs []variant
	seen := map[string]bool{}
	for _, a := range args {
		name, flags, ok := strings.Cut(a, "=")
		name, against, _ := strings.Cut(name, "@")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("variant %q: want NAME=FLAGS or NAME@OTHER=FLAGS", a)
		}
		if seen[name] {
			return nil, fmt.Errorf("variant %q named twice", name)
		}
		if against != "" && !seen[against] {
			return nil, fmt.Errorf("variant %q: compared with %q, which is not an earlier variant", name, against)
		}
		seen[name] = true
		vs = append(vs, variant{name, strings.Fields(flags), against})
	}
	return vs, nil
}

// run measures every variant in every mode and writes the outputs.
func (c *config) run(hmo runner) error {
	if c.rounds < 1 || len(c.modes) == 0 || len(c.variants) == 0 {
		return errors.New("want at least one round, mode and variant")
	}
	tmp, err := os.MkdirTemp(c.workDir, "hmo-ablation-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	res := &Result{Benchmark: c.bench, Data: c.data, Baseline: c.variants[0].Name, Rounds: c.rounds, Seed: c.seed, Modes: c.modes}
	total, done := len(c.modes)*c.rounds*len(c.variants), 0
	for _, mode := range c.modes {
		rows := make([]*Row, len(c.variants))
		index := map[string]int{}
		for i, v := range c.variants {
			index[v.Name] = i
		}
		reportPath := func(i int) string { return filepath.Join(tmp, fmt.Sprintf("%s-%d.json", mode, i)) }
		for round := range c.rounds {
			// Rotate the order each round so no variant always runs first.
			for k := range c.variants {
				i := (k + round) % len(c.variants)
				if round == 0 {
					i = k // the baseline runs first: the others compare with it
				}
				v := c.variants[i]
				args := append([]string{"eval", c.bench, c.data, "--json", "--mode", mode}, v.Flags...)
				if c.workDir != "" {
					args = append(args, "--workdir", c.workDir)
				}
				if round == 0 && i > 0 {
					against, ok := index[v.Against]
					if !ok || against >= i {
						against = 0
					}
					args = append(args, "--baseline", reportPath(against), "--seed", fmt.Sprint(c.seed))
				}
				out, err := hmo(args)
				if err != nil {
					return fmt.Errorf("%s, %s: %w", mode, v.Name, err)
				}
				rep, err := eval.ReadReport(bytes.NewReader(out))
				if err != nil {
					return fmt.Errorf("%s, %s: %w", mode, v.Name, err)
				}
				if round == 0 {
					if err := os.WriteFile(reportPath(i), out, 0o600); err != nil {
						return err
					}
				}
				rows[i] = addRun(rows[i], mode, v, rep)
				done++
				if c.progress != nil {
					fmt.Fprintf(c.progress, "ablation: %d/%d %s %s: R@10 %.3f, median %.2f ms\n",
						done, total, mode, v.Name, rep.Overall.TurnRecall[10], rep.MedianLatencyMS)
				}
			}
		}
		for _, r := range rows {
			r.MedianMS, r.P99MS = median(r.RunsMS), median(r.p99s)
		}
		res.Rows = append(res.Rows, rows...)
	}
	return write(c.out, c.name, res)
}

// addRun folds one run into the variant's row: figures from the first
// run (they do not change between runs), latency from every run.
func addRun(r *Row, mode string, v variant, rep *eval.Report) *Row {
	if r == nil {
		r = &Row{Mode: mode, Name: v.Name, Flags: strings.Join(v.Flags, " "), Against: v.Against, Questions: rep.Overall.Questions,
			Overall: means(&rep.Overall), Category: map[string]map[string]float64{}}
		for cat, m := range rep.ByCategory {
			r.Category[cat] = means(m)
		}
		if c := rep.Comparison; c != nil {
			r.Delta = map[string]eval.Interval{}
			for g, ms := range c.Groups {
				if iv, ok := ms[eval.TurnR10]; ok {
					r.Delta[g] = iv
				}
			}
		}
	}
	r.RunsMS = append(r.RunsMS, rep.MedianLatencyMS)
	r.p99s = append(r.p99s, rep.P99LatencyMS)
	return r
}

func means(m *eval.Metrics) map[string]float64 {
	out := map[string]float64{}
	for _, k := range eval.MetricNames {
		if v, ok := m.Value(k); ok {
			out[k] = v
		}
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// write writes NAME.json, NAME.md and a plot spec per mode under dir.
func write(dir, name string, res *Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.Marshal(res) // compact: the file is for programs, and large
	if err != nil {
		return err
	}
	files := map[string][]byte{name + ".json": append(js, '\n'), name + ".md": []byte(markdown(res))}
	for _, mode := range res.Modes {
		spec, err := json.MarshalIndent(plotSpec(res, mode), "", "  ")
		if err != nil {
			return err
		}
		files[name+"-"+mode+".plot.json"] = append(spec, '\n')
	}
	for f, data := range files {
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// categories lists the categories of the rows of a mode, sorted.
func categories(rows []*Row) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rows {
		for c := range r.Category {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	sort.Strings(out)
	return out
}

func rowsOf(res *Result, mode string) []*Row {
	var out []*Row
	for _, r := range res.Rows {
		if r.Mode == mode {
			out = append(out, r)
		}
	}
	return out
}

// markdown renders one table per mode.
func markdown(res *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Retrieval ablation on %s (%s): turn Recall@10 per category; Δ R@10 is the paired difference against %q (or the variant named after \"vs\") with its 95%% bootstrap interval (seed %d); latency is the median per query", res.Data, res.Benchmark, res.Baseline, res.Seed)
	if res.Rounds > 1 {
		fmt.Fprintf(&b, " (median of %d interleaved runs)", res.Rounds)
	}
	b.WriteString(".\n")
	other := []string{eval.TurnR5, eval.TurnR20, eval.AllHit, eval.SessionAll5, eval.SessionNDCG5}
	for _, mode := range res.Modes {
		rows := rowsOf(res, mode)
		cats := categories(rows)
		fmt.Fprintf(&b, "\n#### %s mode\n\n| variant | %s | R@10 | Δ R@10 [95%% CI] |", mode, strings.Join(cats, " | "))
		for _, m := range other {
			fmt.Fprintf(&b, " %s |", eval.MetricLabel(m))
		}
		b.WriteString(" median ms | p99 ms |\n|---|")
		for range len(cats) + 2 + len(other) + 2 {
			b.WriteString("---:|")
		}
		b.WriteString("\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s |", r.Name)
			for _, c := range cats {
				fmt.Fprintf(&b, " %s |", cell(r.Category[c], eval.TurnR10))
			}
			fmt.Fprintf(&b, " %s |", cell(r.Overall, eval.TurnR10))
			if iv, ok := r.Delta[eval.Overall]; ok {
				fmt.Fprintf(&b, " %+.3f [%+.3f, %+.3f]", iv.Delta, iv.Lo, iv.Hi)
				if r.Against != "" && r.Against != res.Baseline {
					fmt.Fprintf(&b, " vs %s", r.Against)
				}
				b.WriteString(" |")
			} else {
				b.WriteString(" (baseline) |")
			}
			for _, m := range other {
				fmt.Fprintf(&b, " %s |", cell(r.Overall, m))
			}
			fmt.Fprintf(&b, " %.2f | %.2f |\n", r.MedianMS, r.P99MS)
		}
	}
	return b.String()
}

func cell(m map[string]float64, k string) string {
	if v, ok := m[k]; ok {
		return fmt.Sprintf("%.3f", v)
	}
	return "-"
}

// plot is a tools/plot spec.
type plot struct {
	Title  string      `json:"title"`
	Unit   string      `json:"unit"`
	Max    float64     `json:"max"`
	Series []string    `json:"series"`
	Groups []plotGroup `json:"groups"`
}

type plotGroup struct {
	Label  string    `json:"label"`
	Values []float64 `json:"values"`
}

// plotSpec charts Recall@10 per category and overall, one group per
// variant.
func plotSpec(res *Result, mode string) plot {
	rows := rowsOf(res, mode)
	cats := categories(rows)
	p := plot{Title: fmt.Sprintf("Ablation, %s, %s mode", res.Benchmark, mode), Unit: "turn Recall@10", Max: 1,
		Series: append(append([]string(nil), cats...), eval.Overall)}
	for _, r := range rows {
		g := plotGroup{Label: r.Name}
		for _, c := range cats {
			g.Values = append(g.Values, r.Category[c][eval.TurnR10])
		}
		g.Values = append(g.Values, r.Overall[eval.TurnR10])
		p.Groups = append(p.Groups, g)
	}
	return p
}
