package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportTwiceOrResumed reproduces issue 12 / issue 14 finding 9:
// re-running an import doubled the store (34 -> 68), and an import
// interrupted after some batches and run again left the committed part
// twice. Importing twice, or a prefix (what an interrupted run commits:
// whole batches) then the whole file, gives the records of one import.
func TestImportTwiceOrResumed(t *testing.T) {
	lines := make([]string, 5*importBatch/2) // three batches of importBatch, the last half full
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"scope":"s","session":"x%d","role":"user","text":"note number %d about the garden"}`, i/100, i)
	}
	full := filepath.Join(t.TempDir(), "full.jsonl")
	prefix := filepath.Join(t.TempDir(), "prefix.jsonl")
	if err := os.WriteFile(full, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prefix, []byte(strings.Join(lines[:importBatch], "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	once := filepath.Join(t.TempDir(), "once")
	mustRun(t, "", "import", "--dir", once, full)
	want := texts(t, once)
	if len(want) != len(lines) {
		t.Fatalf("one import stored %d records, want %d", len(want), len(lines))
	}
	tests := []struct {
		name    string
		runs    []string
		lastOut string
	}{
		{"twice", []string{full, full}, fmt.Sprintf("imported 0 record(s), skipped %d already stored\n", len(lines))},
		{"resumed", []string{prefix, full}, fmt.Sprintf("imported %d record(s), skipped %d already stored\n", len(lines)-importBatch, importBatch)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			var out string
			for _, f := range tt.runs {
				out = mustRun(t, "", "import", "--dir", dir, f)
			}
			if out != tt.lastOut {
				t.Errorf("last import printed %q, want %q", out, tt.lastOut)
			}
			got := texts(t, dir)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%d records, want the %d of one import", len(got), len(want))
			}
		})
	}
}

// texts lists the exported records' texts in export order.
func texts(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, r := range exported(t, dir) {
		out = append(out, r["text"].(string))
	}
	return out
}

// TestAddTwice: issue 12 saw the same text added twice give two records.
// hmo add of a stored text prints the stored id and says so on stderr; a
// retried add with the same idempotency key does too.
func TestAddTwice(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	first := hmoRun(t, "", "add", "--dir", dir, "--scope", "me", "I am allergic to shellfish")
	again := hmoRun(t, "", "add", "--dir", dir, "--scope", "me", "I am  allergic to shellfish")
	if first.code != 0 || again.code != 0 || again.stdout != first.stdout || !strings.Contains(again.stderr, "already stored: id "+strings.TrimSpace(first.stdout)) {
		t.Fatalf("add twice: %+v then %+v; want the same id and \"already stored\"", first, again)
	}
	k1 := hmoRun(t, "", "add", "--dir", dir, "--idempotency-key", "req-7", "a new note")
	k2 := hmoRun(t, "", "add", "--dir", dir, "--idempotency-key", "req-7", "a new note")
	if k1.code != 0 || k2.stdout != k1.stdout || !strings.Contains(k2.stderr, "already stored") {
		t.Fatalf("retry with key: %+v then %+v", k1, k2)
	}
	if r := hmoRun(t, "", "add", "--dir", dir, "--idempotency-key", "req-7", "another note"); r.code == 0 {
		t.Errorf("key reused for another text: %+v, want a failure", r)
	}
	if n := len(exported(t, dir)); n != 2 {
		t.Errorf("%d records, want 2", n)
	}
}
