package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
)

// TestBinary runs the built command as a subprocess: the exit statuses
// are those of the process, not of run.
func TestBinary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	conv, err := os.ReadFile(conversation)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name  string
		stdin string
		args  []string
		code  int
		out   string // substring of stdout
		err   string // substring of stderr
	}{
		{"version", "", []string{"version"}, 0, "hmo ", ""},
		{"no arguments", "", nil, 2, "", "usage: hmo <command>"},
		{"unknown command", "", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"stats before init", "", []string{"stats", "--dir", dir}, 1, "", "no store in"},
		{"init", "", []string{"init", "--dir", dir}, 0, "store ready in " + dir, ""},
		{"import stdin", string(conv), []string{"import", "--dir", dir, "-"}, 0, "imported 34 record(s)", ""},
		{"recall", "", []string{"recall", "--dir", dir, "-k", "1", "what is the name of the cat"}, 0, "Pixel", ""},
		{"add stdin", "Maya's new flat has a balcony.", []string{"add", "--dir", dir, "-"}, 0, "35\n", ""},
		{"get", "", []string{"get", "--dir", dir, "35"}, 0, "Maya's new flat has a balcony.", ""},
		{"forget", "", []string{"forget", "--dir", dir, "35"}, 0, "forgot 1 record(s)", ""},
		{"get forgotten", "", []string{"get", "--dir", dir, "35"}, 1, "", "not found"},
		{"bad id", "", []string{"get", "--dir", dir, "x"}, 2, "", `bad id "x"`},
		{"unknown flag", "", []string{"recall", "--dir", dir, "--bogus", "cat"}, 2, "", "-bogus"},
		{"bad line", "{\"text\":\"ok\"}\n{\"text\":\n", []string{"import", "--dir", dir, "-"}, 1, "", "line 2:"},
		{"stats", "", []string{"stats", "--dir", dir, "--json"}, 0, `"records": 34`, ""},
	}
	for _, s := range steps {
		r := execHMO(t, s.stdin, nil, s.args...)
		if r.code != s.code || !strings.Contains(r.stdout, s.out) || !strings.Contains(r.stderr, s.err) {
			t.Errorf("%s: hmo %s: %v\nwant exit %d, %q on stdout, %q on stderr", s.name, strings.Join(s.args, " "), r, s.code, s.out, s.err)
		}
	}
}

// TestBinaryEnvDir checks that the process reads $HMO_DIR.
func TestBinaryEnvDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "env-store")
	env := []string{hmo.EnvDir + "=" + dir}
	if r := execHMO(t, "", env, "add", "--role", "user", "kept in the env dir"); r.code != 0 || r.stdout != "1\n" {
		t.Fatalf("add with $HMO_DIR: %v", r)
	}
	r := execHMO(t, "", env, "stats", "--json")
	var s engine.Stats
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || r.code != 0 {
		t.Fatalf("stats with $HMO_DIR: %v (%v)", r, err)
	}
	if s.Dir != dir || s.Records != 1 {
		t.Errorf("stats: dir %q with %d records, want %q with 1", s.Dir, s.Records, dir)
	}
}

// TestLoCoMoSmoke runs the benchmark on the development split through the
// built binary (so -race does not slow it), and checks turn recall.
func TestLoCoMoSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("LoCoMo smoke test takes several seconds; skipped with -short")
	}
	path := os.Getenv("HMO_LOCOMO")
	if path == "" {
		path = "../../../shared/data/locomo-dev.json"
	}
	if _, err := os.Stat(path); err != nil {
		t.Skipf("LoCoMo data not found at %s (set HMO_LOCOMO to its path): %v", path, err)
	}
	r := execHMO(t, "", nil, "eval", "locomo", "--json", "--workdir", t.TempDir(), path)
	if r.code != 0 {
		t.Fatalf("eval: %v", r)
	}
	var rep eval.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("eval --json output: %v\n%s", err, r.stdout)
	}
	t.Logf("%d conversations, %d records, %d questions (%d skipped): R@5 %.3f R@10 %.3f R@20 %.3f, median %.2f ms",
		rep.Conversations, rep.Records, rep.Overall.Questions, rep.Skipped,
		rep.Overall.TurnRecall[5], rep.Overall.TurnRecall[10], rep.Overall.TurnRecall[20], rep.MedianLatencyMS)
	if rep.Overall.Questions == 0 || rep.Records == 0 {
		t.Fatalf("eval scored %d questions over %d records", rep.Overall.Questions, rep.Records)
	}
	if _, ok := rep.ByCategory["adversarial"]; ok {
		t.Error("adversarial questions were scored, want them skipped")
	}
	n := 0
	for _, m := range rep.ByCategory {
		n += m.Questions
	}
	if n != rep.Overall.Questions {
		t.Errorf("categories hold %d questions, overall %d", n, rep.Overall.Questions)
	}
	const floor = 0.66 // measured 0.692 on locomo-dev.json
	if got := rep.Overall.TurnRecall[10]; got < floor {
		t.Errorf("turn Recall@10 = %.3f, want at least %.2f", got, floor)
	}
}
