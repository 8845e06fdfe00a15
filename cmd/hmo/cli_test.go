package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
	"github.com/hmo-dev/hmo/jsonl"
)

func TestInit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	for range 2 { // init on an existing store is harmless
		if got, want := mustRun(t, "", "init", "--dir", dir), "store ready in "+dir+"\n"; got != want {
			t.Errorf("init printed %q, want %q", got, want)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, engine.DBFile))
	if err != nil {
		t.Fatalf("init left no database: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("database mode %v, want 0600", fi.Mode().Perm())
	}
	if s := stats(t, dir); s.Records != 0 || s.Schema != engine.SchemaVersion {
		t.Errorf("fresh store: %d records, schema %d; want 0 and %d", s.Records, s.Schema, engine.SchemaVersion)
	}
}

// TestStoreDir checks where the store goes: --dir, then $HMO_DIR.
func TestStoreDir(t *testing.T) {
	envDir := filepath.Join(t.TempDir(), "from-env")
	flagDir := filepath.Join(t.TempDir(), "from-flag")
	environ := map[string]string{hmo.EnvDir: envDir}
	if r := hmoRunEnv(t, environ, "", "add", "in env dir"); r.code != 0 {
		t.Fatalf("add with $HMO_DIR: %v", r)
	}
	if r := hmoRunEnv(t, environ, "", "add", "--dir", flagDir, "in flag dir"); r.code != 0 {
		t.Fatalf("add --dir: %v", r)
	}
	for dir, want := range map[string]string{envDir: "in env dir", flagDir: "in flag dir"} {
		var r engine.Record
		decode(t, mustRun(t, "", "get", "--dir", dir, "--json", "1"), &r)
		if r.Text != want {
			t.Errorf("record 1 in %s: %q, want %q", dir, r.Text, want)
		}
		if n := stats(t, dir).Records; n != 1 {
			t.Errorf("%s holds %d records, want 1", dir, n)
		}
	}
}

func TestAdd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  engine.Record // ID, Text and the labels are compared
	}{
		{"words joined", "", []string{"My", "cat", "is", "called", "Pixel."},
			engine.Record{ID: 1, Text: "My cat is called Pixel."}},
		{"labels and date", "", []string{"--scope", "maya", "--session", "s9", "--role", "user", "--time", "2024-05-01", "I run on Sundays."},
			engine.Record{ID: 2, Scope: "maya", Session: "s9", Role: "user", Time: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), Text: "I run on Sundays."}},
		{"RFC 3339 time", "", []string{"--time", "2024-05-01T10:30:00+02:00", "Coffee at 10:30."},
			engine.Record{ID: 3, Time: time.Date(2024, 5, 1, 8, 30, 0, 0, time.UTC), Text: "Coffee at 10:30."}},
		{"stdin", "Line one,\n  line two, café 🐈", []string{"-"},
			engine.Record{ID: 4, Text: "Line one,\n  line two, café 🐈"}},
		{"stdin with labels", "from stdin", []string{"--role", "assistant", "-"},
			engine.Record{ID: 5, Role: "assistant", Text: "from stdin"}},
		{"stdin line ending dropped", "echoed\r\n", []string{"-"},
			engine.Record{ID: 6, Text: "echoed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"add", "--dir", dir}, tt.args...)
			if got, want := mustRun(t, tt.stdin, args...), strconv.FormatUint(tt.want.ID, 10)+"\n"; got != want {
				t.Fatalf("add printed %q, want the id %q", got, want)
			}
			var got engine.Record
			decode(t, mustRun(t, "", "get", "--dir", dir, "--json", strconv.FormatUint(tt.want.ID, 10)), &got)
			if got.Text != tt.want.Text || got.Scope != tt.want.Scope || got.Session != tt.want.Session || got.Role != tt.want.Role {
				t.Errorf("get %d = %q %q/%q/%q, want %q %q/%q/%q", tt.want.ID, got.Text, got.Scope, got.Session, got.Role,
					tt.want.Text, tt.want.Scope, tt.want.Session, tt.want.Role)
			}
			if !tt.want.Time.IsZero() && !got.Time.Equal(tt.want.Time) {
				t.Errorf("get %d time %v, want %v", tt.want.ID, got.Time, tt.want.Time)
			}
		})
	}
}

// TestGetText checks the plain output of get: the header, then the text.
func TestGetText(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	mustRun(t, "", "add", "--dir", dir, "--scope", "maya", "--role", "user", "--time", "2024-03-02T09:17:00Z", "My cat Pixel hides under the sofa.")
	out := mustRun(t, "", "get", "--dir", dir, "1")
	for _, want := range []string{"id:       1\n", "scope:    maya\n", "role:     user\n", "time:     2024-03-02 09:17:00 UTC\n", "\n\nMy cat Pixel hides under the sofa.\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("get output lacks %q:\n%s", want, out)
		}
	}
}

func TestImportRecallGetForget(t *testing.T) {
	dir := newStore(t)
	want := readConversation(t)

	if s := stats(t, dir); s.Records != conversationRecords || s.Sessions != 3 || s.Scopes != 1 {
		t.Errorf("stats after import: %d records, %d sessions, %d scopes; want %d, 3, 1", s.Records, s.Sessions, s.Scopes, conversationRecords)
	}

	// Every record reads back as it was in the file.
	for i, in := range want {
		var r engine.Record
		decode(t, mustRun(t, "", "get", "--dir", dir, "--json", strconv.Itoa(i+1)), &r)
		if r.Text != in.Text || r.Scope != in.Scope || r.Session != in.Session || r.Role != in.Role || !r.Time.Equal(in.Time) {
			t.Errorf("record %d = %+v, want line %d of %s: %+v", i+1, r, i+1, conversation, in)
		}
	}

	// Without the relevance floor recall ranks every record (the
	// floor has its own test, TestRecallRelevanceFloor).
	var res []engine.Result
	decode(t, mustRun(t, "", "recall", "--dir", dir, "--json", "--min-score", "-1", "cat", "name"), &res)
	if len(res) != engine.DefaultK {
		t.Fatalf("recall returned %d results, want %d", len(res), engine.DefaultK)
	}
	top := res[0].Record
	if !strings.Contains(top.Text, "Pixel") {
		t.Errorf("top result for %q is %d %q, want one mentioning Pixel", "cat name", top.ID, top.Text)
	}
	for i := 1; i < len(res); i++ {
		if res[i].Score > res[i-1].Score {
			t.Errorf("results out of order: %v after %v", res[i].Score, res[i-1].Score)
		}
	}

	out := mustRun(t, "", "forget", "--dir", dir, strconv.FormatUint(top.ID, 10))
	if out != "forgot 1 record(s)\n" {
		t.Errorf("forget printed %q", out)
	}
	r := hmoRun(t, "", "get", "--dir", dir, strconv.FormatUint(top.ID, 10))
	if r.code != 1 || !strings.Contains(r.stderr, "not found") || r.stdout != "" {
		t.Errorf("get of a forgotten record: %v\nwant exit 1 and 'not found'", r)
	}
	if n := stats(t, dir).Records; n != conversationRecords-1 {
		t.Errorf("stats after forget: %d records, want %d", n, conversationRecords-1)
	}
	decode(t, mustRun(t, "", "recall", "--dir", dir, "--json", "-k", "50", "--min-score", "-1", "cat", "name"), &res)
	for _, x := range res {
		if x.Record.ID == top.ID {
			t.Errorf("recall still returns forgotten record %d", top.ID)
		}
	}
	if len(res) != conversationRecords-1 {
		t.Errorf("recall -k 50 returned %d results, want every remaining record (%d)", len(res), conversationRecords-1)
	}
}

func TestRecallText(t *testing.T) {
	dir := newStore(t)
	out := mustRun(t, "", "recall", "--dir", dir, "-k", "3", "--session", "s3", "marathon training")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("recall -k 3 printed %d lines, want 3:\n%s", len(lines), out)
	}
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 5 || !strings.HasPrefix(f[3], "2024-06-20") {
			t.Errorf("line %q: want 5 tab-separated fields from session s3 (2024-06-20)", l)
		}
	}
	if !strings.Contains(lines[0]+lines[1], "marathon") {
		t.Errorf("top lines %q, want the marathon turns", lines[:2])
	}
}

// TestRecallRelevanceFloor: recall applies the API's relevance floor
// whether a daemon answers or the store itself. Without a daemon it
// printed three unrelated records for a nonsense query, where the
// daemon's search (min_score's default) printed none.
func TestRecallRelevanceFloor(t *testing.T) {
	dir := newStore(t)
	tests := []struct {
		name      string
		args      []string
		wantLines func(n int) bool
		code      int
	}{
		{"nonsense, default floor", []string{"zzqxv nonexistentword"}, func(n int) bool { return n == 0 }, 0},
		{"nonsense, no floor", []string{"--min-score", "-1", "zzqxv nonexistentword"}, func(n int) bool { return n == 3 }, 0},
		{"related, default floor", []string{"food allergy"}, func(n int) bool { return n >= 1 }, 0},
		{"floor above 1", []string{"--min-score", "1.5", "food allergy"}, func(n int) bool { return n == 0 }, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := hmoRun(t, "", append([]string{"recall", "--dir", dir, "-k", "3"}, tt.args...)...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d: %v", r.code, tt.code, r)
			}
			n := len(strings.Fields(strings.TrimSpace(r.stdout)))
			if n > 0 {
				n = len(strings.Split(strings.TrimSpace(r.stdout), "\n"))
			}
			if !tt.wantLines(n) {
				t.Errorf("%d result lines: %v", n, r)
			}
			if tt.code == 0 && n == 0 && !strings.Contains(r.stderr, "relevance floor") {
				t.Errorf("no result and no note on stderr: %v", r)
			}
		})
	}
}

func TestRecallFilters(t *testing.T) {
	dir := newStore(t)
	tests := []struct {
		name string
		args []string
		ok   func(engine.Record) bool
	}{
		{"session", []string{"--session", "s2"}, func(r engine.Record) bool { return r.Session == "s2" }},
		{"from", []string{"--from", "2024-06-01"}, func(r engine.Record) bool { return r.Session == "s3" }},
		{"to", []string{"--to", "2024-04-01"}, func(r engine.Record) bool { return r.Session == "s1" }},
		{"scope", []string{"--scope", "maya"}, func(r engine.Record) bool { return r.Scope == "maya" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res []engine.Result
			args := append(append([]string{"recall", "--dir", dir, "--json", "-k", "50", "--min-score", "-1"}, tt.args...), "Porto")
			decode(t, mustRun(t, "", args...), &res)
			if len(res) == 0 {
				t.Fatal("no results")
			}
			for _, x := range res {
				if !tt.ok(x.Record) {
					t.Errorf("record %d (%s %s) passed filter %v", x.Record.ID, x.Record.Session, x.Record.Time, tt.args)
				}
			}
		})
	}
	var res []engine.Result
	decode(t, mustRun(t, "", "recall", "--dir", dir, "--json", "--scope", "nobody", "Porto"), &res)
	if len(res) != 0 {
		t.Errorf("recall in an empty scope returned %d results", len(res))
	}
}

func TestStatsText(t *testing.T) {
	dir := newStore(t)
	out := mustRun(t, "", "stats", "--dir", dir)
	for _, want := range []string{"records:    34 in 3 session(s), 1 scope(s)", "embedder:   static:"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}
}

// TestExportRoundTrip checks the promise of the README: export, import into
// a new store, export again gives the same bytes.
func TestExportRoundTrip(t *testing.T) {
	dir := newStore(t)
	first := mustRun(t, "", "export", "--dir", dir)
	if n := strings.Count(first, "\n"); n != conversationRecords {
		t.Fatalf("export wrote %d lines, want %d", n, conversationRecords)
	}
	// The export holds what was imported.
	got, err := jsonl.Read(strings.NewReader(first))
	if err != nil {
		t.Fatalf("export does not read back: %v", err)
	}
	want := readConversation(t)
	for i := range want {
		if got[i].Text != want[i].Text || got[i].Role != want[i].Role || !got[i].Time.Equal(want[i].Time) {
			t.Errorf("exported line %d = %+v, want %+v", i+1, got[i], want[i])
		}
	}

	// Through stdin into a second store, and through a file into a third.
	second := filepath.Join(t.TempDir(), "second")
	mustRun(t, first, "import", "--dir", second, "-")
	if again := mustRun(t, "", "export", "--dir", second); again != first {
		t.Errorf("export after re-import differs:\n%s\nwant\n%s", again, first)
	}
	file := filepath.Join(t.TempDir(), "out.jsonl")
	if out := mustRun(t, "", "export", "--dir", second, "--out", file); out != "" {
		t.Errorf("export --out printed %q on stdout", out)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != first {
		t.Errorf("export --out wrote different bytes")
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Errorf("export --out mode %v, want 0600", fi.Mode().Perm())
	}
	third := filepath.Join(t.TempDir(), "third")
	mustRun(t, "", "import", "--dir", third, file)
	if again := mustRun(t, "", "export", "--dir", third); again != first {
		t.Errorf("export after import from a file differs")
	}
}

// TestExportKeepsAddedRecords covers records made by add (time "now",
// sources absent) and text that JSON must escape.
func TestExportKeepsAddedRecords(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	mustRun(t, "", "add", "--dir", dir, "--role", "user", `quote " backslash \ tab	<html> & é`)
	mustRun(t, "multi\nline\r\n", "add", "--dir", dir, "-")
	first := mustRun(t, "", "export", "--dir", dir)
	second := filepath.Join(t.TempDir(), "second")
	mustRun(t, first, "import", "--dir", second, "-")
	if again := mustRun(t, "", "export", "--dir", second); again != first {
		t.Errorf("round trip differs:\n%s\nwant\n%s", again, first)
	}
}

func TestImportLoCoMo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	if out := mustRun(t, "", "import", "--dir", dir, "../../locomo/testdata/small.json"); out != "imported 16 record(s)\n" {
		t.Errorf("import printed %q, want 16 records", out)
	}
	s := stats(t, dir)
	if s.Records != 16 || s.Scopes != 2 || s.Sessions != 6 {
		t.Errorf("stats: %d records, %d scopes, %d sessions; want 16, 2, 6", s.Records, s.Scopes, s.Sessions)
	}
	var r engine.Record
	decode(t, mustRun(t, "", "get", "--dir", dir, "--json", "4"), &r)
	if r.Scope != "conv-a" || r.Session != "session_1" || r.Role != "Bob" || len(r.Sources) != 1 || r.Sources[0] != "D1:4" ||
		!strings.HasSuffix(r.Text, "[shares a photo of a red road bike leaning on a fence]") ||
		!r.Time.Equal(time.Date(2023, 5, 8, 13, 57, 30, 0, time.UTC)) {
		t.Errorf("record 4 = %+v, want Bob's turn D1:4 of conv-a with its caption at 13:57:30", r)
	}
	// --format overrides the file name.
	jsonlDir := filepath.Join(t.TempDir(), "store")
	data, err := os.ReadFile(conversation)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, "", "import", "--dir", jsonlDir, "--format", "jsonl", writeFile(t, "conv.json", data))
	if n := stats(t, jsonlDir).Records; n != conversationRecords {
		t.Errorf("import --format jsonl of a .json file: %d records, want %d", n, conversationRecords)
	}
}

func TestEvalSmall(t *testing.T) {
	const fixture = "../../locomo/testdata/small.json"
	out := mustRun(t, "", "eval", "locomo", "--workdir", t.TempDir(), fixture)
	if want := "2 conversations, 16 records, 8 questions (4 without evidence skipped)\n"; !strings.HasPrefix(out, want) {
		t.Errorf("eval printed\n%s\nwant it to start with %q", out, want)
	}
	for _, want := range []string{"\nmulti-hop ", "\nsingle-hop ", "\ntemporal ", "\noverall ", "latency per query"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval report lacks %q:\n%s", want, out)
		}
	}
	for _, only := range []string{"text", "vector"} {
		var rep eval.Report
		decode(t, mustRun(t, "", "eval", "locomo", "--json", "--only", only, "--workdir", t.TempDir(), fixture), &rep)
		if rep.Overall.Questions != 8 || rep.Overall.TurnRecall[20] != 1 {
			t.Errorf("eval --only %s: %d questions, R@20 %v; want 8 and 1", only, rep.Overall.Questions, rep.Overall.TurnRecall[20])
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{nil, 2, "", "usage: hmo <command>"},
		{[]string{"help"}, 0, "commands:", ""},
		{[]string{"--help"}, 0, "recall", ""},
		{[]string{"-h"}, 0, "examples:", ""},
		{[]string{"add", "-h"}, 0, "usage: hmo add [flags] TEXT...", ""},
		{[]string{"help", "add"}, 0, "usage: hmo add [flags] TEXT...", ""},
		{[]string{"help", "eval", "locomo"}, 0, "usage: hmo eval locomo [flags] FILE", ""},
		{[]string{"help", "remember"}, 2, "", `no help for "remember": no such command`},
		{[]string{"add", "--help"}, 0, "examples:\n  hmo add ", ""},
		{[]string{"recall", "--help"}, 0, "--scope", ""},
		{[]string{"version"}, 0, "hmo ", ""},
		{[]string{"--version"}, 0, "hmo ", ""},
		{[]string{"-v"}, 0, "hmo ", ""},
		{[]string{"--version", "nosuch"}, 0, "hmo ", ""}, // before the argument check, as cobra's --version
		{[]string{"recall", "--version"}, 2, "", "unknown flag: --version"},
	}
	for _, tt := range tests {
		r := hmoRun(t, "", tt.args...)
		if r.code != tt.code || !strings.Contains(r.stdout, tt.stdout) || !strings.Contains(r.stderr, tt.stderr) {
			t.Errorf("hmo %v: %v\nwant exit %d, stdout with %q, stderr with %q", tt.args, r, tt.code, tt.stdout, tt.stderr)
		}
		if tt.code == 0 && r.stderr != "" {
			t.Errorf("hmo %v wrote on stderr: %q; help and version go to stdout", tt.args, r.stderr)
		}
	}
	for _, args := range [][]string{{"--version"}, {"-v"}, {"--version", "nosuch"}} {
		if v, want := hmoRun(t, "", args...).stdout, hmoRun(t, "", "version").stdout; v != want {
			t.Errorf("hmo %v printed %q, hmo version %q", args, v, want)
		}
	}
}

func readConversation(t *testing.T) []engine.Input {
	t.Helper()
	f, err := os.Open(conversation)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ins, err := jsonl.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) != conversationRecords {
		t.Fatalf("%s has %d records, want %d", conversation, len(ins), conversationRecords)
	}
	return ins
}

// TestForgetPurge checks that forget --purge leaves no byte of the
// forgotten text in the store's files, and that compact runs on its own.
func TestForgetPurge(t *testing.T) {
	dir := newStore(t)
	holding := func(secret string) []string {
		var out []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
					out = append(out, p)
				}
			}
			return nil
		})
		return out
	}
	id := strings.TrimSpace(mustRun(t, "", "add", "--dir", dir, "my door code is 58zq31, do not share"))
	mustRun(t, "", "forget", "--dir", dir, id)
	if got := holding("58zq31"); len(got) == 0 {
		t.Fatal("precondition: after a plain forget no file holds the text; the test would prove nothing")
	}
	if out := mustRun(t, "", "compact", "--dir", dir); !strings.Contains(out, "compacted") {
		t.Errorf("compact printed %q", out)
	}
	if got := holding("58zq31"); len(got) != 0 {
		t.Errorf("after compact the forgotten text is still in %v", got)
	}
	id = strings.TrimSpace(mustRun(t, "", "add", "--dir", dir, "the spare key is under pot 77kx2"))
	mustRun(t, "", "forget", "--purge", "--dir", dir, id)
	if got := holding("77kx2"); len(got) != 0 {
		t.Errorf("after forget --purge the forgotten text is still in %v", got)
	}
	if r := hmoRun(t, "", "compact", "--dir", filepath.Join(t.TempDir(), "none")); r.code != 1 {
		t.Errorf("compact without a store: %v, want exit 1", r)
	}
}
