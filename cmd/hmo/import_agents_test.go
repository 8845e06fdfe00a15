package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const (
	sampleTranscript = "../../claudecode/testdata/transcript.jsonl"
	sampleMarkdown   = "../../markdown/testdata"
)

// exported decodes a JSONL export into its records.
func exported(t *testing.T, dir string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(mustRun(t, "", "export", "--dir", dir)), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("export line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func TestImportClaudeCode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	if out := mustRun(t, "", "import", "--dir", dir, "--format", "claude-code", sampleTranscript); out != "imported 6 record(s)\n" {
		t.Fatalf("first import printed %q, want 6 records (5 turns, 1 fact)", out)
	}
	recs := exported(t, dir)
	// The first turn states a decision: its fact follows it.
	wantRoles := []string{"user", "fact", "assistant", "assistant", "user", "assistant"}
	for i, r := range recs {
		// /home/ana/src/tidepool does not exist here: the scope is the cwd.
		if r["role"] != wantRoles[i] || r["scope"] != "/home/ana/src/tidepool" || r["session"] != "5f0c2a9e-1b7d-4c3e-9a51-0d6e7b8c9f10" {
			t.Errorf("record %d: %v", i, r)
		}
	}
	if src := recs[0]["sources"].([]any)[0]; src != "claude-code:a0000000-0000-4000-8000-000000000001" {
		t.Errorf("first source %v", src)
	}
	// Importing again (or after the hooks ingested it into the same
	// scope) adds nothing.
	if out := mustRun(t, "", "import", "--dir", dir, "--format", "claude-code", sampleTranscript); out != "imported 0 record(s), skipped 6 already stored\n" {
		t.Errorf("second import printed %q", out)
	}
	if n := len(exported(t, dir)); n != 6 {
		t.Errorf("%d records after the second import, want 6", n)
	}
}

func TestImportMarkdown(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		want  int
		check func(t *testing.T, recs []map[string]any)
	}{
		{"CLAUDE.md", []string{"--scope", "tidepool", filepath.Join(sampleMarkdown, "CLAUDE.md")}, 8, func(t *testing.T, recs []map[string]any) {
			if recs[0]["scope"] != "tidepool" || !strings.HasPrefix(recs[0]["text"].(string), "Tide-table service") {
				t.Errorf("first record %v", recs[0])
			}
			if recs[0]["sources"].([]any)[0] != "markdown:CLAUDE.md:6" {
				t.Errorf("first source %v", recs[0]["sources"])
			}
		}},
		{"daily note", []string{filepath.Join(sampleMarkdown, "memory", "2026-03-02.md")}, 2, func(t *testing.T, recs []map[string]any) {
			if !strings.HasPrefix(recs[0]["time"].(string), "2026-03-02T00:00:00") {
				t.Errorf("daily note dated %v", recs[0]["time"])
			}
		}},
		{"OpenClaw workspace directory", []string{"--scope", "ana", sampleMarkdown}, 3 + 8 + 2, func(t *testing.T, recs []map[string]any) {
			if recs[0]["text"] != "Ana prefers short answers with code first." {
				t.Errorf("MEMORY.md should come first: %v", recs[0])
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			args := append([]string{"import", "--dir", dir}, tt.args...)
			out := mustRun(t, "", args...)
			if want := "imported " + strconv.Itoa(tt.want) + " record(s)\n"; out != want {
				t.Fatalf("printed %q, want %q", out, want)
			}
			tt.check(t, exported(t, dir))
		})
	}
}

// TestExportMarkdown checks that a Markdown export imports into a new
// store that exports the same Markdown.
func TestExportMarkdown(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	mustRun(t, "", "import", "--dir", dir, "--format", "claude-code", sampleTranscript)
	mustRun(t, "", "import", "--dir", dir, sampleMarkdown)
	md := mustRun(t, "", "export", "--dir", dir, "--format", "markdown")
	for _, want := range []string{"# hmo memories", "## scope: /home/ana/src/tidepool", "### 2026-03-02", "- Cache the parsed tables"} {
		if !strings.Contains(md, want) {
			t.Errorf("export lacks %q:\n%s", want, md)
		}
	}
	file := filepath.Join(t.TempDir(), "export.md")
	if err := os.WriteFile(file, []byte(md), 0o600); err != nil {
		t.Fatal(err)
	}
	second := filepath.Join(t.TempDir(), "second")
	mustRun(t, "", "import", "--dir", second, file)
	if again := mustRun(t, "", "export", "--dir", second, "--format", "markdown"); again != md {
		t.Errorf("markdown round trip differs:\n%s\nwant\n%s", again, md)
	}
}

func TestImportAgentsBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	data, err := os.ReadFile(sampleTranscript)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, append(data, []byte("{\"type\":\"user\",\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	// A workspace whose daily note holds a bullet over the size limit.
	workspace := t.TempDir()
	if err := os.MkdirAll(filepath.Join(workspace, "memory"), 0o700); err != nil {
		t.Fatal(err)
	}
	note := "# 2026-03-02\n\n- fine\n- " + strings.Repeat("long ", 14000) + "\n"
	if err := os.WriteFile(filepath.Join(workspace, "MEMORY.md"), []byte("- ok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(workspace, "memory", "2026-03-02.md"), []byte(note), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"malformed transcript", []string{"--format", "claude-code", bad}, 1, "line 14"},
		{"unknown format", []string{"--format", "docx", bad}, 2, "unknown format"},
		{"directory as jsonl", []string{"--format", "jsonl", empty}, 1, "is a directory"},
		{"empty memory directory", []string{empty}, 1, "no MEMORY.md"},
		{"oversize note in a workspace", []string{workspace}, 1, ": 2026-03-02.md line 4: record too large"},
		{"oversize note file", []string{filepath.Join(workspace, "memory", "2026-03-02.md")}, 1, "2026-03-02.md: line 4: record too large"},
		{"bad export format", nil, 2, "want jsonl or markdown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			mustRun(t, "", "init", "--dir", dir)
			args := append([]string{"import", "--dir", dir}, tt.args...)
			if tt.args == nil {
				args = []string{"export", "--dir", dir, "--format", "pdf"}
			}
			r := hmoRun(t, "", args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.msg) {
				t.Errorf("got %v; want exit %d mentioning %q", r, tt.code, tt.msg)
			}
			if n := len(exported(t, dir)); n != 0 {
				t.Errorf("bad input stored %d records", n)
			}
		})
	}
}
