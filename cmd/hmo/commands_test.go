package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
)

// TestFlagsAfterArguments runs every command with its flags after its
// arguments (the order people type): each flag must take effect, none may
// end up in the arguments.
func TestFlagsAfterArguments(t *testing.T) {
	dir := newStore(t)
	other := filepath.Join(t.TempDir(), "other")
	imported := filepath.Join(t.TempDir(), "imported")
	mustRun(t, "", "init", "--dir", other)
	mustRun(t, "", "add", "--dir", other, "x marks the spot")
	record := func(t *testing.T, d, id string) engine.Record {
		t.Helper()
		var r engine.Record
		decode(t, mustRun(t, "", "get", id, "--dir", d, "--json"), &r)
		return r
	}
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		check func(t *testing.T, r result)
	}{
		{"init", "", []string{"init", "--dir", filepath.Join(t.TempDir(), "new")}, 0, func(t *testing.T, r result) {
			if !strings.HasPrefix(r.stdout, "store ready in ") || !strings.Contains(r.stdout, "new") {
				t.Errorf("init: %v", r)
			}
		}},
		{"add", "", []string{"add", "note text", "--scope", "me", "--dir", dir}, 0, func(t *testing.T, r result) {
			got := record(t, dir, strings.TrimSpace(r.stdout))
			if got.Text != "note text" || got.Scope != "me" {
				t.Errorf("add stored %q in scope %q, want %q in scope me", got.Text, got.Scope, "note text")
			}
		}},
		{"add stdin", "from stdin", []string{"add", "-", "--role", "user", "--dir", dir}, 0, func(t *testing.T, r result) {
			if got := record(t, dir, strings.TrimSpace(r.stdout)); got.Text != "from stdin" || got.Role != "user" {
				t.Errorf("add - stored %q with role %q", got.Text, got.Role)
			}
		}},
		{"recall in another store", "", []string{"recall", "spot", "--dir", other, "-k", "1"}, 0, func(t *testing.T, r result) {
			if n := strings.Count(r.stdout, "\n"); n != 1 || !strings.Contains(r.stdout, "x marks the spot") {
				t.Errorf("recall spot --dir other -k 1: %v; want the one record of the other store", r)
			}
		}},
		{"recall json", "", []string{"recall", "name of the cat", "--json", "-k", "2", "--dir", dir}, 0, func(t *testing.T, r result) {
			var res []engine.Result
			decode(t, r.stdout, &res)
			if len(res) != 2 || !strings.Contains(res[0].Record.Text+res[1].Record.Text, "Pixel") {
				t.Errorf("recall --json -k 2: %d results: %v", len(res), res)
			}
		}},
		{"get json", "", []string{"get", "5", "--json", "--dir", dir}, 0, func(t *testing.T, r result) {
			var got engine.Record
			decode(t, r.stdout, &got)
			if got.ID != 5 {
				t.Errorf("get 5 --json: record %d", got.ID)
			}
		}},
		{"forget purge", "", []string{"forget", "9", "--purge", "--dir", dir}, 0, func(t *testing.T, r result) {
			if !strings.Contains(r.stdout, "forgot 1 record(s)") || !strings.Contains(r.stdout, "compacted") {
				t.Errorf("forget 9 --purge: %v; want the record forgotten and the store compacted", r)
			}
		}},
		{"import", "", []string{"import", conversation, "--scope", "imported", "--format", "jsonl", "--dir", imported}, 0, func(t *testing.T, r result) {
			if got := record(t, imported, "1"); got.Scope != "imported" {
				t.Errorf("import --scope imported: record 1 in scope %q", got.Scope)
			}
		}},
		{"export", "", []string{"export", "--format", "markdown", "--dir", dir}, 0, func(t *testing.T, r result) {
			if !strings.HasPrefix(r.stdout, "# hmo memories") {
				t.Errorf("export --format markdown: %.200s", r.stdout)
			}
		}},
		{"stats", "", []string{"stats", "--json", "--dir", other}, 0, func(t *testing.T, r result) {
			var s engine.Stats
			decode(t, r.stdout, &s)
			if s.Records != 1 {
				t.Errorf("stats --json --dir other: %d records, want 1", s.Records)
			}
		}},
		{"persona", "", []string{"persona", "--json", "--dir", dir}, 0, func(t *testing.T, r result) {
			var p map[string]any
			decode(t, r.stdout, &p)
			if _, ok := p["drift"]; !ok {
				t.Errorf("persona --json: %v", p)
			}
		}},
		{"compact", "", []string{"compact", "--dir", other}, 0, func(t *testing.T, r result) {
			if !strings.Contains(r.stdout, "compacted "+other) {
				t.Errorf("compact --dir other: %v", r)
			}
		}},
		{"reindex", "", []string{"reindex", "--embedder", "static", "--dir", other}, 0, func(t *testing.T, r result) {
			if !strings.Contains(r.stdout, "store already uses static") {
				t.Errorf("reindex --embedder static: %v", r)
			}
		}},
		{"doctor", "", []string{"doctor", "--dir", dir, "--ollama-host", "127.0.0.1:1"}, 0, func(t *testing.T, r result) {
			if !strings.Contains(r.stdout, "note  ollama: not reachable at http://127.0.0.1:1") {
				t.Errorf("doctor --ollama-host: %v", r)
			}
		}},
		{"eval", "", []string{"eval", "locomo", "../../locomo/testdata/small.json", "--json", "--only", "text", "--workdir", t.TempDir()}, 0, func(t *testing.T, r result) {
			var rep eval.Report
			decode(t, r.stdout, &rep)
			if rep.Overall.Questions != 8 {
				t.Errorf("eval locomo FILE --json: %d questions, want 8", rep.Overall.Questions)
			}
		}},
		{"serve", "", []string{"serve", "--stop", "--dir", other}, 0, func(t *testing.T, r result) {
			if !strings.Contains(r.stderr, "no daemon serves this store") {
				t.Errorf("serve --stop: %v", r)
			}
		}},
		{"mcp", "", []string{"mcp", "--dir", other, "--http", "0.0.0.0:0"}, 2, func(t *testing.T, r result) {
			if !strings.Contains(r.stderr, `--http "0.0.0.0:0": want a loopback address`) {
				t.Errorf("mcp --http: %v", r)
			}
		}},
		{"hook", "", []string{"hook", "claude", "Stop", "--timeout", "soon", "--dir", other}, 0, func(t *testing.T, r result) {
			if !strings.Contains(r.stderr, `"soon"`) || r.stdout != "" {
				t.Errorf("hook claude Stop --timeout soon: %v; want the bad flag reported, exit 0", r)
			}
		}},
		{"list", "", []string{"list", "--session", "s2", "--role", "user", "--limit", "2", "--json", "--dir", dir}, 0, func(t *testing.T, r result) {
			var page api.ListResponse
			decode(t, r.stdout, &page)
			if len(page.Memories) != 2 || page.Memories[0].Session != "s2" || page.Memories[1].Role != "user" || page.NextCursor == "" {
				t.Errorf("list --session s2 --role user --limit 2 --json: %+v", page)
			}
		}},
		{"version", "", []string{"version"}, 0, func(t *testing.T, r result) {
			if !strings.HasPrefix(r.stdout, "hmo ") {
				t.Errorf("version: %v", r)
			}
		}},
		{"completion", "", []string{"completion", "fish", "--no-descriptions"}, 0, func(t *testing.T, r result) {
			if !strings.Contains(r.stdout, "complete -c hmo") {
				t.Errorf("completion fish --no-descriptions: %.300s", r.stdout)
			}
		}},
		{"ui", "", []string{"ui", "--json", "--dir", filepath.Join(t.TempDir(), "typo")}, 1, func(t *testing.T, r result) {
			if !strings.Contains(r.stderr, "no store in") || !strings.HasSuffix(strings.TrimSpace(r.stderr), "typo')") {
				t.Errorf("ui --json --dir typo: %v", r)
			}
		}},
		{"man", "", []string{"man", filepath.Join(t.TempDir(), "man")}, 0, func(t *testing.T, r result) {
			if !strings.Contains(r.stdout, "manual pages written to") {
				t.Errorf("man DIR: %v", r)
			}
		}},
		{"salvage", "", []string{"salvage", filepath.Join(t.TempDir(), "copy"), "--dir", other}, 0, func(t *testing.T, r result) {
			if !strings.Contains(r.stdout, "1 record") {
				t.Errorf("salvage NEWDIR --dir other: %v; want the other store's one record copied", r)
			}
		}},
		{"go-style single-dash flags", "", []string{"recall", "-dir", other, "-json", "-k", "1", "spot"}, 0, func(t *testing.T, r result) {
			var res []engine.Result
			decode(t, r.stdout, &res)
			if len(res) != 1 || res[0].Record.Text != "x marks the spot" {
				t.Errorf("recall -dir other -json -k 1 spot: %v", r)
			}
		}},
		{"-- ends the flags", "", []string{"add", "--dir", other, "--", "--scope", "is text here"}, 0, func(t *testing.T, r result) {
			if got := record(t, other, strings.TrimSpace(r.stdout)); got.Text != "--scope is text here" || got.Scope != "" {
				t.Errorf("add -- --scope ...: stored %q in scope %q", got.Text, got.Scope)
			}
		}},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.args[0]] = true
		t.Run(tt.name, func(t *testing.T) {
			r := hmoRun(t, tt.stdin, tt.args...)
			if r.code != tt.code {
				t.Fatalf("hmo %s: %v\nwant exit %d", strings.Join(tt.args, " "), r, tt.code)
			}
			tt.check(t, r)
		})
	}
	// Every command is in the table: a new one must be added here.
	for _, c := range newRoot(&env{}).Commands() {
		if c.IsAvailableCommand() && !covered[c.Name()] {
			t.Errorf("command %s is not run with flags after its arguments here", c.Name())
		}
	}
}

// TestPerCommandFlags checks that each command offers only its own flags.
func TestPerCommandFlags(t *testing.T) {
	tests := []struct {
		cmd  string
		has  []string
		lack []string
	}{
		{"init", []string{"--dir", "--embedder", "--json"}, []string{"--mode", "--enrich-wait", "--chat-model"}},
		{"get", []string{"--dir", "--json"}, []string{"--enrich-wait", "--mode", "--embedder"}},
		{"add", []string{"--scope", "--enrich-wait", "--chat-model"}, []string{"--mode", "-k"}},
		{"recall", []string{"--mode", "-k", "--from"}, []string{"--enrich-wait", "--embedder", "--purge"}},
		{"forget", []string{"--purge"}, []string{"--mode", "--enrich-wait", "--chat-model"}},
		{"serve", []string{"--detach", "--idle", "--mode"}, []string{"--enrich-wait", "--embedder"}},
	}
	for _, tt := range tests {
		r := hmoRun(t, "", tt.cmd, "--help")
		if r.code != 0 {
			t.Fatalf("hmo %s --help: %v", tt.cmd, r)
		}
		for _, f := range tt.has {
			if !strings.Contains(r.stdout, f+" ") && !strings.Contains(r.stdout, f+",") {
				t.Errorf("hmo %s --help lacks %s:\n%s", tt.cmd, f, r.stdout)
			}
		}
		for _, f := range tt.lack {
			if strings.Contains(r.stdout, f+" ") {
				t.Errorf("hmo %s --help offers %s, which it does not use", tt.cmd, f)
			}
			if r := hmoRun(t, "", tt.cmd, f, "x"); r.code != 2 || !strings.Contains(r.stderr, "unknown") {
				t.Errorf("hmo %s %s x: %v; want exit 2, unknown flag", tt.cmd, f, r)
			}
		}
	}
}

// TestCompletion checks that the completion scripts are generated for
// each shell, name hmo's commands and work on their own.
func TestCompletion(t *testing.T) {
	tests := []struct {
		shell string
		marks []string // what a real script of that shell holds
	}{
		{"bash", []string{"complete -o default -F __start_hmo hmo", "__hmo_handle_completion_types"}},
		{"zsh", []string{"#compdef hmo", "compdef _hmo hmo"}},
		{"fish", []string{"complete -c hmo", "__hmo_perform_completion"}},
		{"powershell", []string{"Register-ArgumentCompleter", "-CommandName 'hmo'"}},
	}
	for _, tt := range tests {
		r := hmoRun(t, "", "completion", tt.shell)
		if r.code != 0 || r.stderr != "" || len(r.stdout) < 2000 {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", tt.shell, r.code, len(r.stdout), r.stderr)
		}
		for _, m := range tt.marks {
			if !strings.Contains(r.stdout, m) {
				t.Errorf("completion %s lacks %q", tt.shell, m)
			}
		}
	}
	// The scripts ask hmo itself for candidates (__complete): it must
	// list the commands and a command's flags.
	r := hmoRun(t, "", "__complete", "")
	for _, c := range []string{"add", "recall", "serve", "completion"} {
		if !strings.Contains(r.stdout, c+"\t") {
			t.Errorf("__complete '' lacks %s:\n%s", c, r.stdout)
		}
	}
	r = hmoRun(t, "", "__complete", "recall", "--")
	for _, f := range []string{"--scope", "--from", "--json"} {
		if !strings.Contains(r.stdout, f) {
			t.Errorf("__complete recall -- lacks %s:\n%s", f, r.stdout)
		}
	}
	// Flags with a fixed set of values complete to them.
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "x", "--format", ""}, "jsonl\nlocomo\nclaude-code\nmarkdown\n"},
		{[]string{"export", "--format", ""}, "jsonl\nmarkdown\n"},
		{[]string{"recall", "x", "--mode", ""}, "tiered\nflat\n"},
		{[]string{"serve", "--log-level", ""}, "debug\ninfo\nwarn\nerror\n"},
	} {
		if r := hmoRun(t, "", append([]string{"__complete"}, tt.args...)...); !strings.HasPrefix(r.stdout, tt.want) {
			t.Errorf("__complete %q: %q, want %q", tt.args, r.stdout, tt.want)
		}
	}
	if r := hmoRun(t, "", "completion", "tcsh"); r.code != 2 {
		t.Errorf("completion tcsh: %v; want exit 2", r)
	}
}

// TestJSONEverywhere runs every command that reports something with
// --json: its stdout must be one JSON value, and nothing else.
func TestJSONEverywhere(t *testing.T) {
	dir := newStore(t)
	fresh := filepath.Join(t.TempDir(), "fresh")
	tests := [][]string{
		{"init", "--dir", fresh},
		{"add", "a note", "--dir", dir},
		{"import", conversation, "--dir", fresh},
		{"recall", "cat", "--dir", dir},
		{"list", "--dir", dir},
		{"get", "1", "--dir", dir},
		{"forget", "2", "3", "--dir", dir},
		{"forget", "4", "--purge", "--dir", dir},
		{"compact", "--dir", dir},
		{"stats", "--dir", dir},
		{"persona", "--dir", dir},
		{"reindex", "--embedder", "static", "--dir", dir},
		{"doctor", "--dir", dir, "--ollama-host", "127.0.0.1:1"},
		{"serve", "--stop", "--dir", dir},
		{"version"},
		{"eval", "locomo", "../../locomo/testdata/small.json", "--only", "text", "--workdir", t.TempDir()},
	}
	for _, args := range tests {
		t.Run(args[0], func(t *testing.T) {
			r := hmoRun(t, "", append(args, "--json")...)
			if r.code != 0 {
				t.Fatalf("hmo %s --json: %v", strings.Join(args, " "), r)
			}
			var v any
			dec := json.NewDecoder(strings.NewReader(r.stdout))
			if err := dec.Decode(&v); err != nil || dec.More() || v == nil {
				t.Errorf("hmo %s --json: stdout is not one JSON value (%v):\n%s", strings.Join(args, " "), err, r.stdout)
			}
		})
	}
}

// TestManPages checks that hmo man writes a page per command.
func TestManPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man")
	mustRun(t, "", "man", dir)
	for _, c := range newRoot(&env{}).Commands() {
		if !c.IsAvailableCommand() {
			continue // help
		}
		b, err := os.ReadFile(filepath.Join(dir, "hmo-"+c.Name()+".1"))
		if err != nil || !strings.Contains(string(b), `.TH "HMO" "1"`) || !strings.Contains(string(b), c.Short[:10]) {
			t.Errorf("man page of %s: %v\n%.300s", c.Name(), err, b)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hmo-recall.1")); err != nil || !strings.Contains(string(b), `\fB--scope\fP`) {
		t.Errorf("hmo-recall.1 lacks --scope: %v", err)
	}
}
