package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
	"github.com/hmo-dev/hmo/hnsw"
	"github.com/hmo-dev/hmo/internal/testembed"
	"github.com/hmo-dev/hmo/jsonl"
)

// TestBadInput runs each bad command against a store holding the sample
// conversation: it must fail with the right exit status and a message
// that names the problem, and leave the store as it was.
func TestBadInput(t *testing.T) {
	dir := newStore(t)
	before := takeSnapshot(t, dir)
	if before.records != conversationRecords {
		t.Fatalf("snapshot holds %d records, want %d", before.records, conversationRecords)
	}

	good := `{"text":"a good line that must not be imported"}` + "\n"
	file := func(name, data string) string { return writeFile(t, name, []byte(data)) }
	big := strings.Repeat("word ", engine.DefaultMaxTextBytes/5+1) // just over 64 KiB
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		msgs  []string // each must appear on stderr
	}{
		// Bad data: exit 1.
		{"malformed JSON line", "", []string{"import", file("bad.jsonl", good+good+`{"text": "unterminated`+"\n"+good)},
			1, []string{"line 3:", "malformed line", "nothing imported"}},
		{"malformed JSON on stdin", good + "{nope}\n", []string{"import", "-"},
			1, []string{"-: line 2:", "malformed line"}},
		{"invalid UTF-8", "", []string{"import", file("utf8.jsonl", good+"{\"text\":\"caf\xe9\"}\n")},
			1, []string{"line 2:", "not valid UTF-8", "nothing imported"}},
		{"empty text", "", []string{"import", file("empty.jsonl", good+`{"text":"   "}`+"\n")},
			1, []string{"empty.jsonl: line 2: empty text", "nothing imported"}},
		{"empty text after blank lines", "", []string{"import", file("blank.jsonl", good+"\n\n"+good+`{"text":"   "}`+"\n")},
			1, []string{"blank.jsonl: line 5: empty text", "nothing imported"}},
		{"oversize record", "", []string{"import", file("big.jsonl", good+`{"text":"`+big+`"}`+"\n")},
			1, []string{"line 2:", "record too large", "limit 65536", "nothing imported"}},
		{"LoCoMo turn too large", "", []string{"import", file("turn.json", `[{"sample_id":"c1","conversation":{"speaker_a":"A","speaker_b":"B","session_1_date_time":"1:56 pm on 8 May, 2023","session_1":[{"speaker":"A","dia_id":"D1:1","text":"hi"},{"speaker":"B","dia_id":"D1:2","text":"`+big+`"}]},"qa":[]}]`)},
			1, []string{"turn.json: turn D1:2: record too large", "nothing imported"}},
		{"line too long", "", []string{"import", file("long.jsonl", good+good+strings.Repeat(" ", jsonl.MaxLineBytes+1)+"\n")},
			1, []string{"line 3:", "line too long", "nothing imported"}},
		{"unknown field", "", []string{"import", file("field.jsonl", `{"text":"hi","mood":"happy"}`+"\n")},
			1, []string{"line 1:", `unknown field "mood"`}},
		{"bad time", "", []string{"import", file("time.jsonl", good+`{"text":"hi","time":"last Tuesday"}`+"\n")},
			1, []string{"line 2:", "time", "last Tuesday"}},
		{"time out of range", "", []string{"import", file("old.jsonl", `{"text":"hi","time":"1500-01-01T00:00:00Z"}`+"\n")},
			1, []string{"line 1:", "outside years"}},
		{"trailing data", "", []string{"import", file("trail.jsonl", `{"text":"a"}}`+"\n")},
			1, []string{"line 1:", "trailing data"}},
		{"LoCoMo file that is not JSON", "", []string{"import", file("notjson.json", "sample_id: conv-1\n")},
			1, []string{"notjson.json:", "locomo: malformed file", "nothing imported"}},
		{"LoCoMo of the wrong shape", "", []string{"import", file("shape.json", `{"sample_id":"conv-1"}`)},
			1, []string{"locomo: malformed file"}},
		{"missing file", "", []string{"import", filepath.Join(t.TempDir(), "nope.jsonl")},
			1, []string{"no such file"}},
		{"add empty text", "", []string{"add", "  "}, 1, []string{"empty text"}},
		{"add empty stdin", "", []string{"add", "-"}, 1, []string{"empty text"}},
		{"add oversize stdin", big, []string{"add", "-"}, 1, []string{"record too large: text is 65540 bytes, limit 65536 bytes"}},
		{"add 10 MB stdin", strings.Repeat("x", 10<<20), []string{"add", "-"}, 1, []string{"text is 10485760 bytes (10.0 MiB), limit 65536 bytes"}},
		{"add oversize text", "", []string{"add", big}, 1, []string{"text is 65540 bytes"}},
		{"add invalid UTF-8", "", []string{"add", "caf\xe9"}, 1, []string{"not valid UTF-8"}},
		{"forget unknown id", "", []string{"forget", "1", "999"}, 1, []string{"not found"}},
		{"get unknown id", "", []string{"get", "999"}, 1, []string{"hmo get: not found: record 999\n"}},

		// Bad command lines: exit 2.
		{"unknown flag", "", []string{"stats", "--bogus"}, 2, []string{"unknown flag: --bogus"}},
		{"unknown import flag", "", []string{"import", "--bogus", conversation}, 2, []string{"-bogus"}},
		{"unknown format", "", []string{"import", "--format", "xml", conversation}, 2, []string{`unknown format "xml"`}},
		{"import without file", "", []string{"import"}, 2, []string{"import needs one file"}},
		{"add without text", "", []string{"add"}, 2, []string{"add needs text"}},
		{"add bad time", "", []string{"add", "--time", "yesterday", "hi"}, 2, []string{`time "yesterday"`}},
		{"bad id", "", []string{"get", "abc"}, 2, []string{`bad id "abc"`}},
		{"zero id", "", []string{"forget", "1", "0"}, 2, []string{`bad id "0"`}},
		{"negative id", "", []string{"get", "--", "-3"}, 2, []string{`bad id "-3"`}},
		{"get two ids", "", []string{"get", "1", "2"}, 2, []string{"get needs one id"}},
		{"forget without id", "", []string{"forget"}, 2, []string{"forget needs at least one id"}},
		{"recall without query", "", []string{"recall", " "}, 2, []string{"recall needs a query"}},
		{"recall bad k", "", []string{"recall", "-k", "-1", "cat"}, 2, []string{"k=-1"}},
		{"recall empty range", "", []string{"recall", "--from", "2024-05-01", "--to", "2024-04-01", "cat"}, 2, []string{"empty time range"}},
		{"recall bad from", "", []string{"recall", "--from", "May", "cat"}, 2, []string{`time "May"`}},
		{"init with an argument", "", []string{"init", "extra"}, 2, []string{"init takes no arguments"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{tt.args[0], "--dir", dir}, tt.args[1:]...)
			r := hmoRun(t, tt.stdin, args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d\n%v", r.code, tt.code, r)
			}
			for _, m := range tt.msgs {
				if !strings.Contains(r.stderr, m) {
					t.Errorf("stderr lacks %q:\n%s", m, r.stderr)
				}
			}
			if !strings.HasPrefix(r.stderr, "hmo "+tt.args[0]+": ") && !strings.Contains(r.stderr, "\nhmo "+tt.args[0]+": ") {
				t.Errorf("stderr does not name the command:\n%s", r.stderr)
			}
			if strings.Contains(r.stderr, ": hmo: ") {
				t.Errorf("stderr repeats the prefix: %s", r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
			if after := takeSnapshot(t, dir); after != before {
				t.Errorf("store changed: %d records (log seq %d), want %d (log seq %d)",
					after.records, after.logSeq, before.records, before.logSeq)
				before = after // report each case once, not every later one
			}
		})
	}
}

func TestUnknownCommand(t *testing.T) {
	r := hmoRun(t, "", "remember", "hello")
	if r.code != 2 || !strings.Contains(r.stderr, `unknown command "remember"`) || !strings.Contains(r.stderr, "commands:") {
		t.Errorf("%v\nwant exit 2, the unknown command named and the list of commands", r)
	}
}

// TestMissingStore checks that commands which only read or delete refuse a
// directory without a store, and do not create one.
func TestMissingStore(t *testing.T) {
	for _, args := range [][]string{
		{"stats"}, {"export"}, {"recall", "cat"}, {"get", "1"}, {"forget", "1"}, {"ui", "--no-open"},
	} {
		dir := filepath.Join(t.TempDir(), "typo")
		r := hmoRun(t, "", append([]string{args[0], "--dir", dir}, args[1:]...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "no store in "+dir) || !strings.Contains(r.stderr, "hmo init") {
			t.Errorf("hmo %s on a missing store: %v\nwant exit 1 and 'no store in %s'", args[0], r, dir)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("hmo %s created %s (stat: %v)", args[0], dir, err)
		}
	}
}

func otherOptions() *engine.Options {
	return &engine.Options{
		Embedder: testembed.Hash{ID: "test:other-hash/16", Size: 16}, // a name the CLI does not use
		OpenVectorIndex: func(dir string, dims int) (engine.VectorIndex, error) {
			return hnsw.Open(dir, &hnsw.Options{Dims: dims})
		},
		OpenTextIndex:    func(dir string) (engine.TextIndex, error) { return fts.Open(dir, nil) },
		NewTierTextIndex: func() (engine.TextIndex, error) { return fts.NewMemory("") },
	}
}

// TestOtherEmbedder opens a store built with another embedder: every
// command that opens it must refuse, point at hmo reindex, and change
// nothing.
func TestOtherEmbedder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	e, err := engine.Open(dir, otherOptions())
	if err != nil {
		t.Fatalf("engine.Open: %v", err)
	}
	if _, err := e.Remember(context.Background(), engine.Input{Text: "one"}, engine.Input{Text: "two"}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"stats"}, {"init"}, {"export"}, {"recall", "one"}, {"get", "1"}, {"forget", "1"}, {"add", "three"}, {"import", conversation},
	} {
		r := hmoRun(t, "", append([]string{args[0], "--dir", dir}, args[1:]...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "hmo reindex") || !strings.Contains(r.stderr, "another embedder") ||
			!strings.Contains(r.stderr, "test:other-hash/16") || r.stdout != "" {
			t.Errorf("hmo %s: %v\nwant exit 1 naming the store's embedder and 'hmo reindex'", args[0], r)
		}
	}
	e, err = engine.Open(dir, otherOptions())
	if err != nil {
		t.Fatalf("reopen with the store's embedder: %v", err)
	}
	defer e.Close()
	s, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if s.Records != 2 || s.LogSeq != 2 || s.Embedder != "test:other-hash/16" {
		t.Errorf("store after the refused commands: %d records, log seq %d, embedder %q; want 2, 2, test:other-hash/16",
			s.Records, s.LogSeq, s.Embedder)
	}
}

func TestEvalBadInput(t *testing.T) {
	notJSON := writeFile(t, "notjson.json", []byte("not json at all"))
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"not JSON", []string{"eval", "locomo", notJSON}, 1, "locomo: malformed file"},
		{"missing file", []string{"eval", "locomo", filepath.Join(t.TempDir(), "none.json")}, 1, "no such file"},
		{"no benchmark", []string{"eval"}, 2, "usage: hmo eval locomo"},
		{"unknown benchmark", []string{"eval", "msc", "x.json"}, 2, "usage: hmo eval locomo"},
		{"no file", []string{"eval", "locomo"}, 2, "eval locomo needs one file"},
		{"bad --only", []string{"eval", "locomo", "--only", "both", notJSON}, 2, `--only "both"`},
		{"bad --fusion", []string{"eval", "locomo", "--fusion", "max", "--workdir", t.TempDir(), "../../locomo/testdata/small.json"}, 2, `fusion "max"`},
		{"bad --text-weight", []string{"eval", "locomo", "--text-weight", "2", "--workdir", t.TempDir(), "../../locomo/testdata/small.json"}, 2, "text weight 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := hmoRun(t, "", tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.msg) || r.stdout != "" {
				t.Errorf("%v\nwant exit %d and %q on stderr", r, tt.code, tt.msg)
			}
		})
	}
}
