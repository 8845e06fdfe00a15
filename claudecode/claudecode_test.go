package claudecode_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/claudecode"
)

const sample = "testdata/transcript.jsonl"

// wantTurns are the prose turns of the sample transcript.
var wantTurns = []struct{ uuid, role, prefix string }{
	{"a0000000-0000-4000-8000-000000000001", "user", "The tide tables come from NOAA"},
	{"a0000000-0000-4000-8000-000000000002", "assistant", "I'll write the parser"},
	{"a0000000-0000-4000-8000-000000000005", "assistant", "Done: tides/csv.go"},
	{"a0000000-0000-4000-8000-000000000007", "user", "Cache the parsed tables"},
	{"a0000000-0000-4000-8000-000000000008", "assistant", "Added a 30-day cache"},
}

func TestReadSample(t *testing.T) {
	f, err := os.Open(sample)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	turns, err := claudecode.Read(f)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if len(turns) != len(wantTurns) {
		t.Fatalf("got %d turns, want %d: %+v", len(turns), len(wantTurns), turns)
	}
	for i, w := range wantTurns {
		got := turns[i]
		if got.UUID != w.uuid || got.Role != w.role || !strings.HasPrefix(got.Text, w.prefix) {
			t.Errorf("turn %d: got %s %s %q, want %s %s %q...", i, got.UUID, got.Role, got.Text, w.uuid, w.role, w.prefix)
		}
		if got.SessionID != "5f0c2a9e-1b7d-4c3e-9a51-0d6e7b8c9f10" || got.CWD != "/home/ana/src/tidepool" {
			t.Errorf("turn %d: session %q cwd %q", i, got.SessionID, got.CWD)
		}
		if got.Time.IsZero() || got.Time.Location() != time.UTC {
			t.Errorf("turn %d: time %v, want a UTC time", i, got.Time)
		}
		if src := got.Source(); src != "claude-code:"+w.uuid {
			t.Errorf("turn %d: source %q", i, src)
		}
	}
	if strings.Contains(turns[1].Text, "CSV parser.") {
		t.Errorf("thinking block leaked into %q", turns[1].Text)
	}
}

func TestParseLine(t *testing.T) {
	long := strings.Repeat("é", claudecode.MaxTextBytes)
	tests := []struct {
		name, line string
		ok         bool
		text       string
		err        error
	}{
		{"string content", `{"type":"user","uuid":"u1","message":{"role":"user","content":"hello"}}`, true, "hello", nil},
		// issue 12: "No response requested." was stored as a turn.
		{"synthetic assistant line", `{"type":"assistant","uuid":"s1","message":{"role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"No response requested."}]}}`, false, "", nil},
		{"model assistant line", `{"type":"assistant","uuid":"s2","message":{"role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"No response requested."}]}}`, true, "No response requested.", nil},
		{"text blocks joined", `{"type":"assistant","uuid":"u2","message":{"content":[{"type":"text","text":"a"},{"type":"tool_use","id":"t","name":"Bash","input":{}},{"type":"text","text":"b"}]}}`, true, "a\n\nb", nil},
		{"tool result only", `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}}`, false, "", nil},
		{"sidechain", `{"type":"user","isSidechain":true,"message":{"content":"sub"}}`, false, "", nil},
		{"meta", `{"type":"user","isMeta":true,"message":{"content":"meta"}}`, false, "", nil},
		{"compact summary", `{"type":"user","isCompactSummary":true,"message":{"content":"This session is being continued"}}`, false, "", nil},
		{"command markup", `{"type":"user","message":{"content":"<command-name>/model</command-name>"}}`, false, "", nil},
		{"interrupted", `{"type":"user","message":{"content":[{"type":"text","text":"[Request interrupted by user]"}]}}`, false, "", nil},
		{"summary line", `{"type":"summary","summary":"x","leafUuid":"u"}`, false, "", nil},
		{"no message", `{"type":"user","uuid":"u"}`, false, "", nil},
		{"null content", `{"type":"user","message":{"content":null}}`, false, "", nil},
		{"blank", `   `, false, "", nil},
		{"unknown fields ignored", `{"type":"user","future":{"x":1},"message":{"content":"hi","extra":2}}`, true, "hi", nil},
		{"long text truncated", `{"type":"user","message":{"content":"` + long + `"}}`, true, "", nil},
		{"not JSON", `{"type":"user"`, false, "", claudecode.ErrSyntax},
		{"bad content", `{"type":"user","message":{"content":5}}`, false, "", claudecode.ErrSyntax},
		{"bad UTF-8", "{\"type\":\"user\",\"message\":{\"content\":\"\xff\"}}", false, "", claudecode.ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := claudecode.ParseLine([]byte(tt.line))
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v (turn %+v)", ok, tt.ok, got)
			}
			if tt.name == "long text truncated" {
				if len(got.Text) > claudecode.MaxTextBytes || !strings.HasSuffix(got.Text, claudecode.TruncatedMark) {
					t.Fatalf("text of %d bytes ends %q, want at most %d ending in the mark", len(got.Text), got.Text[len(got.Text)-20:], claudecode.MaxTextBytes)
				}
				return
			}
			if ok && got.Text != tt.text {
				t.Fatalf("text %q, want %q", got.Text, tt.text)
			}
		})
	}
}

func TestReadStrict(t *testing.T) {
	in := `{"type":"user","message":{"content":"one"}}` + "\n" + `{"type":` + "\n"
	turns, err := claudecode.Read(strings.NewReader(in))
	if !errors.Is(err, claudecode.ErrSyntax) || !strings.Contains(err.Error(), "line 2") || turns != nil {
		t.Fatalf("got %v, %v; want nil and a line 2 syntax error", turns, err)
	}
	// Final: a last line without newline is read.
	turns, err = claudecode.Read(strings.NewReader(`{"type":"user","message":{"content":"last"}}`))
	if err != nil || len(turns) != 1 || turns[0].Text != "last" {
		t.Fatalf("got %+v, %v; want the last line", turns, err)
	}
}

// TestScannerResume checks offsets: a scan that stops before a partial
// last line resumes where it stopped, sees only new lines, and skips
// malformed ones.
func TestScannerResume(t *testing.T) {
	first := `{"type":"user","uuid":"1","message":{"content":"one"}}` + "\n" + `garbage` + "\n"
	partial := `{"type":"assistant","uuid":"2","message":{"content":"tw`
	s := claudecode.NewScanner(strings.NewReader(first+partial), nil)
	var got []string
	for s.Scan() {
		got = append(got, s.Turn().Text)
	}
	if s.Err() != nil || strings.Join(got, ",") != "one" || s.Skipped() != 1 {
		t.Fatalf("first scan: %v, err %v, skipped %d; want [one], nil, 1", got, s.Err(), s.Skipped())
	}
	if s.Offset() != int64(len(first)) {
		t.Fatalf("offset %d, want %d (before the partial line)", s.Offset(), len(first))
	}
	rest := partial + `o"}}` + "\n" + `{"type":"user","uuid":"3","message":{"content":"three"}}` + "\n"
	s = claudecode.NewScanner(strings.NewReader(rest), &claudecode.ScanOptions{Offset: s.Offset()})
	got = nil
	var offs []int64
	for s.Scan() {
		got = append(got, s.Turn().Text)
		offs = append(offs, s.Turn().Offset)
	}
	if strings.Join(got, ",") != "two,three" {
		t.Fatalf("second scan: %v, want [two three]", got)
	}
	if offs[0] != int64(len(first)) || s.Offset() != int64(len(first)+len(rest)) {
		t.Fatalf("offsets %v, end %d; want first at %d, end %d", offs, s.Offset(), len(first), len(first)+len(rest))
	}
}

func TestScannerOversizeLine(t *testing.T) {
	big := `{"type":"user","message":{"content":"` + strings.Repeat("x", claudecode.MaxLineBytes) + `"}}` + "\n"
	in := big + `{"type":"user","message":{"content":"after"}}` + "\n"
	s := claudecode.NewScanner(strings.NewReader(in), nil)
	var got []string
	for s.Scan() {
		got = append(got, s.Turn().Text)
	}
	if strings.Join(got, ",") != "after" || s.Skipped() != 1 || s.Offset() != int64(len(in)) {
		t.Fatalf("got %v, skipped %d, offset %d; want [after], 1, %d", got, s.Skipped(), s.Offset(), len(in))
	}
}

func TestProjectScope(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	sub := filepath.Join(repo, "a", "b")
	wt := filepath.Join(root, "worktree")
	for _, d := range []string{filepath.Join(repo, ".git"), sub, wt} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(root, "plain")
	tests := []struct{ dir, want string }{
		{sub, repo},
		{repo + "/", repo},
		{wt, wt},
		{plain, plain},
		{"", ""},
	}
	for _, tt := range tests {
		if got := claudecode.ProjectScope(tt.dir); got != tt.want {
			t.Errorf("ProjectScope(%q) = %q, want %q", tt.dir, got, tt.want)
		}
	}
}
