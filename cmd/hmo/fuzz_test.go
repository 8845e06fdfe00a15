package main

import (
	"strings"
	"testing"
)

// fuzzCommands are the commands FuzzArgs drives: those that neither
// start a daemon nor wait for one, nor call a language model server.
var fuzzCommands = []string{"add", "recall", "get", "stats", "export", "forget", "persona", "import", "version", "nosuch"}

// FuzzArgs runs hmo in-process with arbitrary arguments against one
// store: it never panics, exits 0, 1 or 2, and says why when it fails.
// Arguments naming paths are dropped, so the fuzzer stays in its store.
func FuzzArgs(f *testing.F) {
	dir := newStore(f)
	for _, s := range []string{
		"0 tide", "1 what is the name of the cat", "2 3", "2 -1", "3 --json", "4 --format markdown", "5 999999",
		"1 -k 0 x", "1 -k 99999999999999999999 x", "1 --from 2024-13-45 x", "0 --at yesterday x", "0 \xff\xfe",
		"7 -", "6 --json", "1 --mode nope x", "0 --scope " + strings.Repeat("s", 300) + " x", "9 x", "1 --", "0",
	} {
		f.Add(s, "stdin text")
	}
	f.Fuzz(func(t *testing.T, line, stdin string) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			return
		}
		cmd := fuzzCommands[int(fields[0][0])%len(fuzzCommands)]
		args := []string{cmd}
		for _, a := range fields[1:] {
			if strings.ContainsAny(a, "/\\") || strings.Contains(a, "dir") || strings.HasPrefix(a, "--create") {
				continue // stay in the fuzz store
			}
			args = append(args, a)
		}
		args = append(args, "--dir", dir)
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("hmo %q panicked: %v", args, r)
			}
		}()
		r := hmoRun(t, stdin, args...)
		if r.code < 0 || r.code > 2 {
			t.Fatalf("hmo %q: exit %d", args, r.code)
		}
		if r.code != 0 && strings.TrimSpace(r.stderr) == "" {
			t.Fatalf("hmo %q: exit %d without a message", args, r.code)
		}
	})
}
