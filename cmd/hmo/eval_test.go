package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/eval"
)

const (
	locomoFixture      = "../../locomo/testdata/small.json"
	longMemEvalFixture = "../../testdata/longmemeval-small.json"
	oracleFixture      = "../../testdata/longmemeval-oracle-small.json"
)

// TestEvalFlagsAnywhere checks that flags may follow the file (the issue:
// "hmo eval locomo FILE --json" exited 2) and that "--" ends them.
func TestEvalFlagsAnywhere(t *testing.T) {
	work := t.TempDir()
	tests := []struct {
		name string
		args []string
	}{
		{"flags first", []string{"eval", "locomo", "--json", "--workdir", work, "--only", "text", locomoFixture}},
		{"flags after the file", []string{"eval", "locomo", locomoFixture, "--json", "--workdir", work, "--only", "text"}},
		{"flags around the file", []string{"eval", "locomo", "--json", locomoFixture, "--workdir=" + work, "-only", "text"}},
		{"double dash", []string{"eval", "locomo", "--json", "--workdir", work, "--only", "text", "--", locomoFixture}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rep eval.Report
			decode(t, mustRun(t, "", tt.args...), &rep)
			if rep.Benchmark != "locomo" || rep.Overall.Questions != 8 || len(rep.Questions) != 8 {
				t.Errorf("report: %s, %d questions, %d per-question results; want locomo, 8, 8",
					rep.Benchmark, rep.Overall.Questions, len(rep.Questions))
			}
		})
	}
}

func TestEvalLongMemEval(t *testing.T) {
	out := mustRun(t, "", "eval", "longmemeval", longMemEvalFixture, "--workdir", t.TempDir(), "--mode", "flat")
	if want := "7 haystacks, 97 records, 6 questions (1 abstention or without answer sessions skipped)\n"; !strings.HasPrefix(out, want) {
		t.Errorf("eval longmemeval printed\n%s\nwant it to start with %q", out, want)
	}
	for _, want := range []string{"\nmulti-session ", "\nsingle-session-preference     1       -       -       -       -   1.000", "\noverall ", "sNDCG@5", "latency per query"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval longmemeval report lacks %q:\n%s", want, out)
		}
	}
	var rep eval.Report
	decode(t, mustRun(t, "", "eval", "longmemeval", "--json", oracleFixture, "--workdir", t.TempDir()), &rep)
	if rep.Benchmark != "longmemeval" || rep.Records != 25 || rep.Overall.SessionAll5 != 1 {
		t.Errorf("oracle: %s, %d records, session All@5 %v; want longmemeval, 25, 1", rep.Benchmark, rep.Records, rep.Overall.SessionAll5)
	}
}

func TestEvalBaseline(t *testing.T) {
	work := t.TempDir()
	base := mustRun(t, "", "eval", "locomo", locomoFixture, "--json", "--workdir", work, "--only", "vector")
	basePath := writeFile(t, "base.json", []byte(base))
	// The same settings: every difference is 0, so every interval is [0, 0].
	var rep eval.Report
	decode(t, mustRun(t, "", "eval", "locomo", locomoFixture, "--json", "--workdir", work, "--only", "vector",
		"--baseline", basePath, "--seed", "9", "--resamples", "1000"), &rep)
	c := rep.Comparison
	if c == nil || c.Paired != 8 || c.Seed != 9 || c.Resamples != 1000 || c.Baseline != basePath {
		t.Fatalf("comparison %+v, want 8 paired, seed 9, 1000 resamples, baseline %s", c, basePath)
	}
	for g, ms := range c.Groups {
		for m, iv := range ms {
			if iv.Delta != 0 || iv.Lo != 0 || iv.Hi != 0 {
				t.Errorf("%s %s: %+v, want a zero-width interval at 0", g, m, iv)
			}
		}
	}
	if len(c.Groups[eval.Overall]) != len(eval.MetricNames) {
		t.Errorf("overall compares %d metrics, want %d", len(c.Groups[eval.Overall]), len(eval.MetricNames))
	}
	// Another setting, printed: the comparison follows the table.
	out := mustRun(t, "", "eval", "locomo", "--baseline", basePath, locomoFixture, "--workdir", work, "--only", "text")
	for _, want := range []string{"\noverall ", "paired bootstrap against " + basePath + ": 8 questions paired (0 only in the baseline, 0 only in this run), 2000 resamples, seed 1, 95% percentile intervals",
		"\noverall    R@10         8 "} {
		if !strings.Contains(out, want) {
			t.Errorf("eval --baseline printed\n%s\nwant %q", out, want)
		}
	}
}

func TestEvalBadBaseline(t *testing.T) {
	work := t.TempDir()
	lme := writeFile(t, "lme.json", []byte(mustRun(t, "", "eval", "longmemeval", "--json", oracleFixture, "--workdir", work)))
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"missing baseline", []string{"--baseline", filepath.Join(work, "none.json")}, 1, "--baseline: open"},
		{"baseline not JSON", []string{"--baseline", writeFile(t, "b.json", []byte("R@10 0.69"))}, 1, "eval: unusable baseline: invalid character"},
		{"old report without questions", []string{"--baseline", writeFile(t, "old.json", []byte(`{"overall":{"questions":8}}`))}, 1, "no per-question results"},
		{"other benchmark", []string{"--baseline", lme}, 1, "a longmemeval baseline for a locomo run"},
		{"too few resamples", []string{"--baseline", lme, "--resamples", "10"}, 1, "10 resamples: want at least 1000"},
		{"two files", []string{locomoFixture}, 2, "eval locomo needs one file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"eval", "locomo", locomoFixture, "--workdir", work}, tt.args...)
			r := hmoRun(t, "", args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.msg) || r.stdout != "" {
				t.Errorf("%v\nwant exit %d and %q on stderr", r, tt.code, tt.msg)
			}
		})
	}
}

func TestEvalLongMemEvalBadInput(t *testing.T) {
	tests := []struct {
		name, data string
		msg        string
	}{
		{"not JSON", "haystack", "longmemeval: malformed file: invalid character"},
		{"no haystack", `[{"question_id":"q1"}]`, "question 0 (q1): no haystack_sessions"},
		{"lengths differ", `[{"question_id":"q1","haystack_sessions":[[]],"haystack_session_ids":["a","b"]}]`, "2 haystack_session_ids for 1 haystack_sessions"},
		{"a LoCoMo file", `[{"sample_id":"conv-1","conversation":{},"qa":[]}]`, "no question_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := hmoRun(t, "", "eval", "longmemeval", writeFile(t, "x.json", []byte(tt.data)), "--workdir", t.TempDir())
			if r.code != 1 || !strings.Contains(r.stderr, tt.msg) || r.stdout != "" {
				t.Errorf("%v\nwant exit 1 and %q on stderr", r, tt.msg)
			}
		})
	}
}

// TestEvalStages checks that --stages reaches the pipeline: the text
// stage alone ranks as --only text does, and the vector stage alone
// differently.
func TestEvalStages(t *testing.T) {
	work := t.TempDir()
	run := func(args ...string) *eval.Report {
		var rep eval.Report
		decode(t, mustRun(t, "", append([]string{"eval", "locomo", locomoFixture, "--json", "--workdir", work, "--mode", "flat"}, args...)...), &rep)
		return &rep
	}
	perQuestion := func(rep *eval.Report) string {
		var b strings.Builder
		for _, q := range rep.Questions {
			fmt.Fprintf(&b, "%s %v\n", q.ID, q.Metrics)
		}
		return b.String()
	}
	// --only text takes the vector stage out of the given stages (the
	// default ones include priors and feedback, which --only leaves on).
	textStage, onlyText := run("--stages", "none,text"), run("--only", "text", "--stages", "none,text,vector")
	if perQuestion(textStage) != perQuestion(onlyText) {
		t.Errorf("--stages none,text and --only text rank differently:\n%s\n%s", perQuestion(textStage), perQuestion(onlyText))
	}
	if vector := run("--stages", "none,vector"); perQuestion(vector) == perQuestion(textStage) {
		t.Errorf("--stages none,vector ranks as none,text: the flag does not reach the pipeline")
	}
	// A value that looks like another flag's single-dash name stays the
	// value: "-context" removes the context stage, it is not --context.
	if without, def := run("--stages", "-context"), run(); perQuestion(without) != perQuestion(def) {
		t.Errorf("--stages -context ranks differently from the default, which lacks the context stage")
	}
	r := hmoRun(t, "", "eval", "locomo", locomoFixture, "--stages", "text,bogus", "--workdir", work)
	if r.code != 2 || !strings.Contains(r.stderr, `--stages "text,bogus": retrieve: invalid stages: unknown stage "bogus"`) || r.stdout != "" {
		t.Errorf("bad --stages: %v", r)
	}
}
