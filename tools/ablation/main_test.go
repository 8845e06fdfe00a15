package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/eval"
	"github.com/hmo-dev/hmo/retrieve"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestDefaultVariants(t *testing.T) {
	got := defaultVariants([]string{"text", "vector"}, []string{"speaker", "segtree"}, true)
	want := []variant{
		{"candidates (text+vector)", []string{"--stages=none,text,vector"}, ""},
		{"text only", []string{"--stages=none,text"}, ""},
		{"vector only", []string{"--stages=none,vector"}, ""},
		{"+ speaker", []string{"--stages=none,text,vector,speaker"}, ""},
		{"+ segtree", []string{"--stages=none,text,vector,segtree"}, ""},
		{"default", nil, ""},
		{"all stages", []string{"--stages=none,text,vector,speaker,segtree"}, ""},
		{"default − speaker", []string{"--stages=-speaker"}, "default"},
		{"default − segtree", []string{"--stages=-segtree"}, "default"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaultVariants\n got %q\nwant %q", got, want)
	}
	if got := defaultVariants([]string{"text"}, nil, false); len(got) != 3 {
		t.Errorf("defaultVariants without other stages: %q, want the candidates, text alone and the default", got)
	}
}

func TestOtherStages(t *testing.T) {
	got := otherStages([]string{"text", "vector"})
	if len(got) != len(retrieve.StageNames())-2 || slices.Contains(got, "text") || !slices.Contains(got, "speaker") || !slices.Contains(got, "segtree") {
		t.Errorf("otherStages = %v, want every stage of %v but text and vector", got, retrieve.StageNames())
	}
}

func TestParseVariants(t *testing.T) {
	vs, err := parseVariants([]string{"bm25=--only text --context -1", "hybrid=", "rrf@hybrid=--fusion rrf"})
	want := []variant{{"bm25", []string{"--only", "text", "--context", "-1"}, ""}, {"hybrid", []string{}, ""}, {"rrf", []string{"--fusion", "rrf"}, "hybrid"}}
	if err != nil || !reflect.DeepEqual(vs, want) {
		t.Errorf("parseVariants = %q, %v; want %q", vs, err, want)
	}
	for _, bad := range [][]string{{"no-equals"}, {"=--only text"}, {"a=", "a=--only text"}, {"a@b=", "b="}, {"a@a="}} {
		if _, err := parseVariants(bad); err == nil {
			t.Errorf("parseVariants(%q) succeeded, want an error", bad)
		}
	}
}

// fakeHMO stands in for the hmo binary: a report of 20 questions in two
// categories whose Recall@10 rises with the variant's position in order
// and, in tiered mode, is a little lower; with --baseline it compares as
// hmo does.
func fakeHMO(t *testing.T, order []string, calls *[][]string) runner {
	return func(args []string) ([]byte, error) {
		*calls = append(*calls, args)
		end := len(args)
		if i := slices.Index(args, "--workdir"); i >= 0 {
			end = i // the tool adds --workdir and --baseline after the variant's flags
		}
		name := strings.Join(args[6:end], " ")
		k := slices.Index(order, name)
		if k < 0 {
			return nil, fmt.Errorf("unknown variant flags %q", name)
		}
		shift := 0.0
		if args[5] == "tiered" {
			shift = -0.05
		}
		rep := &eval.Report{Benchmark: args[1], MedianLatencyMS: 1 + float64(k)/4 + float64(len(*calls)%2)/10, P99LatencyMS: 3}
		for q := range 20 {
			v := min(1, max(0, float64((q*7)%10)/10+0.1*float64(k)+shift))
			rep.Questions = append(rep.Questions, &eval.QuestionResult{
				ID: fmt.Sprintf("c:q%d", q), Category: []string{"multi-hop", "temporal"}[q%2],
				Metrics: map[string]float64{eval.TurnR5: v / 2, eval.TurnR10: v, eval.TurnR20: 1, eval.AllHit: float64(q % 2),
					eval.SessionAll5: 1, eval.SessionNDCG5: 0.9, eval.SessionTop5Turns: 1},
			})
		}
		rep.Aggregate()
		if i := slices.Index(args, "--baseline"); i >= 0 {
			f, err := os.Open(args[i+1])
			if err != nil {
				return nil, err
			}
			defer f.Close()
			base, err := eval.ReadReport(f)
			if err != nil {
				return nil, err
			}
			if rep.Comparison, err = eval.Compare(base, rep, eval.CompareOptions{Seed: 1}); err != nil {
				return nil, err
			}
		}
		return json.Marshal(rep)
	}
}

func TestRun(t *testing.T) {
	out := t.TempDir()
	vs := []variant{{"text", []string{"--only", "text"}, ""}, {"vector", []string{"--only", "vector"}, ""}, {"hybrid", nil, "vector"}}
	c := config{bench: "locomo", data: "dev.json", out: out, name: "abl", modes: []string{"flat", "tiered"},
		rounds: 2, seed: 1, variants: vs, workDir: t.TempDir()}
	var calls [][]string
	if err := c.run(fakeHMO(t, []string{"--only text", "--only vector", ""}, &calls)); err != nil {
		t.Fatalf("run: %v", err)
	}
	// 2 modes x 2 rounds x 3 variants; round 1 runs the baseline first and
	// compares the others with it; round 2 rotates.
	if len(calls) != 12 {
		t.Fatalf("%d runs, want 12", len(calls))
	}
	wantFirst := []string{"eval", "locomo", "dev.json", "--json", "--mode", "flat", "--only", "text", "--workdir", c.workDir}
	if !reflect.DeepEqual(calls[0], wantFirst) {
		t.Errorf("first run %q, want %q", calls[0], wantFirst)
	}
	if !slices.Contains(calls[1], "--baseline") || slices.Contains(calls[3], "--baseline") || calls[3][6] != "--only" || calls[3][7] != "vector" {
		t.Errorf("runs 2 and 4: %q, %q: want a comparison in round 1 only, and round 2 to start with the second variant", calls[1], calls[3])
	}
	// hybrid compares with vector's report, vector with text's.
	baseOf := func(call []string) string { return filepath.Base(call[slices.Index(call, "--baseline")+1]) }
	if baseOf(calls[1]) != "flat-0.json" || baseOf(calls[2]) != "flat-1.json" {
		t.Errorf("baselines %s and %s, want flat-0.json and flat-1.json", baseOf(calls[1]), baseOf(calls[2]))
	}
	var res Result
	data, err := os.ReadFile(filepath.Join(out, "abl.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 6 || res.Baseline != "text" || res.Rows[0].Delta != nil || len(res.Rows[1].Delta) != 3 || len(res.Rows[1].RunsMS) != 2 ||
		res.Rows[2].Against != "vector" || math.Abs(res.Rows[2].Delta[eval.Overall].Delta-0.09) > 1e-9 {
		t.Errorf("result rows %d, baseline %q, first delta %v, second delta %v runs %v",
			len(res.Rows), res.Baseline, res.Rows[0].Delta, res.Rows[1].Delta, res.Rows[1].RunsMS)
	}
	for _, mode := range []string{"flat", "tiered"} {
		var p plot
		spec, err := os.ReadFile(filepath.Join(out, "abl-"+mode+".plot.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(spec, &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Groups) != 3 || !reflect.DeepEqual(p.Series, []string{"multi-hop", "temporal", "overall"}) || len(p.Groups[2].Values) != 3 {
			t.Errorf("%s plot: series %v, groups %+v", mode, p.Series, p.Groups)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "abl.md"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "abl.md", md)
}

func TestRunErrors(t *testing.T) {
	c := config{bench: "locomo", data: "x", out: t.TempDir(), name: "a", modes: []string{"flat"}, rounds: 1,
		variants: []variant{{"a", nil, ""}}}
	fail := func([]string) ([]byte, error) { return nil, fmt.Errorf("exit status 2: unknown flag --stages") }
	if err := c.run(fail); err == nil || !strings.Contains(err.Error(), "flat, a: exit status 2: unknown flag --stages") {
		t.Errorf("run with a failing hmo: %v", err)
	}
	notJSON := func([]string) ([]byte, error) { return []byte("R@10 0.7"), nil }
	if err := c.run(notJSON); err == nil || !strings.Contains(err.Error(), "unusable baseline") {
		t.Errorf("run with output that is not a report: %v", err)
	}
	c.rounds = 0
	if err := c.run(notJSON); err == nil {
		t.Error("run with no rounds succeeded")
	}
}

// TestRunBinary runs the real hmo on the small LoCoMo fixture.
func TestRunBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds hmo; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "hmo")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/hmo").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := t.TempDir()
	c := config{bench: "locomo", data: "../../locomo/testdata/small.json", out: out, name: "small", modes: []string{"flat", "tiered"},
		rounds: 1, seed: 1, variants: []variant{{"text", []string{"--only", "text"}, ""}, {"hybrid", nil, ""}}, workDir: t.TempDir()}
	err := c.run(func(args []string) ([]byte, error) {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stderr = &stderr
		o, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%v: %s", err, stderr.String())
		}
		return o, nil
	})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	md, err := os.ReadFile(filepath.Join(out, "small.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#### flat mode", "#### tiered mode", "| text | ", "(baseline)", "| hybrid | "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("small.md lacks %q:\n%s", want, md)
		}
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./tools/ablation -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./tools/ablation -update rewrites it)\n got:\n%s\nwant:\n%s", path, got, want)
	}
}
