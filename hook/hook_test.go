package hook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/hook"
)

// Paths of the fictitious user in testdata.
const (
	recordedProjects = "/home/ana/.claude/projects/-home-ana-src-tidepool"
	recordedRepo     = "/home/ana/src/tidepool"
	recordedSession  = "5f0c2a9e-1b7d-4c3e-9a51-0d6e7b8c9f10"
)

// env is one test's Claude Code: a git repository with a subdirectory
// (the payloads' cwd), a transcript and a state directory.
type env struct {
	repo, transcript string
	opts             *hook.Options
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{repo: filepath.Join(root, "tidepool")}
	projects := filepath.Join(root, "projects")
	for _, d := range []string{filepath.Join(e.repo, ".git"), filepath.Join(e.repo, "tides"), projects} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	e.transcript = filepath.Join(projects, recordedSession+".jsonl")
	data, err := os.ReadFile("testdata/transcript.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	e.write(t, data)
	e.opts = &hook.Options{StateDir: filepath.Join(root, "state"), Timeout: 2 * time.Second, TranscriptRoots: []string{projects}}
	return e
}

// payload is the recorded payload of event with this env's paths.
func (e *env) payload(t *testing.T, event string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", event+".json"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), recordedProjects, filepath.Dir(e.transcript))
	return strings.ReplaceAll(s, recordedRepo, e.repo)
}

func (e *env) write(t *testing.T, data []byte) {
	t.Helper()
	if err := os.WriteFile(e.transcript, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (e *env) appendLines(t *testing.T, s string) {
	t.Helper()
	f, err := os.OpenFile(e.transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// run runs the hook and returns what it printed.
func (e *env) run(t *testing.T, event, payload string, svc api.Service) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := hook.Claude(context.Background(), event, strings.NewReader(payload), &out, svc, e.opts)
	return out.String(), err
}

// wantTranscript are the prose turns of testdata/transcript.jsonl.
var wantTranscript = []struct{ role, uuid, prefix string }{
	{"user", "a0000000-0000-4000-8000-000000000001", "The tide tables come from NOAA as CSV."},
	{"assistant", "a0000000-0000-4000-8000-000000000002", "I'll write the parser in tides/csv.go"},
	{"assistant", "a0000000-0000-4000-8000-000000000005", "Done: tides/csv.go parses"},
	{"user", "a0000000-0000-4000-8000-000000000007", "Cache the parsed tables in ~/.cache/tidepool"},
	{"assistant", "a0000000-0000-4000-8000-000000000008", "Added a 30-day cache"},
}

func TestIngestEvents(t *testing.T) {
	for _, event := range []string{hook.EventStop, hook.EventPreCompact, hook.EventSessionEnd} {
		t.Run(event, func(t *testing.T) {
			e := newEnv(t)
			svc := &fakeService{}
			out, err := e.run(t, event, e.payload(t, event), svc)
			if err != nil || out != "" {
				t.Fatalf("got output %q, error %v; want none", out, err)
			}
			mems := svc.memories()
			if len(mems) != len(wantTranscript) {
				t.Fatalf("ingested %d turns, want %d: %+v", len(mems), len(wantTranscript), mems)
			}
			for i, w := range wantTranscript {
				m := mems[i]
				if m.Role != w.role || !strings.HasPrefix(m.Text, w.prefix) {
					t.Errorf("turn %d: got %s %q, want %s %q...", i, m.Role, m.Text, w.role, w.prefix)
				}
				if m.Scope != e.repo || m.Session != recordedSession {
					t.Errorf("turn %d: scope %q session %q, want %q %q", i, m.Scope, m.Session, e.repo, recordedSession)
				}
				if len(m.Sources) != 1 || m.Sources[0] != "claude-code:"+w.uuid {
					t.Errorf("turn %d: sources %v, want [claude-code:%s]", i, m.Sources, w.uuid)
				}
				if m.Time.IsZero() {
					t.Errorf("turn %d: no time", i)
				}
			}
		})
	}
}

// TestIngestOnlyNew checks that repeated Stop hooks ingest each turn once:
// nothing when nothing is new, only the appended lines, and a line being
// written only once it is complete.
func TestIngestOnlyNew(t *testing.T) {
	e := newEnv(t)
	svc := &fakeService{}
	stop := e.payload(t, hook.EventStop)
	steps := []struct {
		name   string
		append string
		want   int // total memories after the hook
	}{
		{"first stop", "", 5},
		{"nothing new", "", 5},
		{"two new turns and a partial line",
			`{"type":"user","uuid":"n1","sessionId":"` + recordedSession + `","timestamp":"2026-03-02T10:00:00Z","message":{"role":"user","content":"Tides for Porto next."}}` + "\n" +
				`{"type":"assistant","uuid":"n2","sessionId":"` + recordedSession + `","timestamp":"2026-03-02T10:00:05Z","message":{"role":"assistant","content":[{"type":"text","text":"Adding the Porto station."}]}}` + "\n" +
				`{"type":"user","uuid":"n3","sessionId":"` + recordedSession + `","timestamp":"2026-03-02T10:01:00Z","message":{"role":"user","content":"And Lis`, 7},
		{"partial line completed", `bon."}}` + "\n", 8},
		{"nothing new again", "", 8},
	}
	for _, s := range steps {
		e.appendLines(t, s.append)
		if _, err := e.run(t, hook.EventStop, stop, svc); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := len(svc.memories()); got != s.want {
			t.Fatalf("%s: %d memories, want %d", s.name, got, s.want)
		}
	}
	if last := svc.memories()[7].Text; last != "And Lisbon." {
		t.Fatalf("last turn %q, want the completed line", last)
	}
}

// TestIngestAfterLostState simulates a crash after Add but before the
// state was saved: the next hook finds every turn stored and adds none.
func TestIngestAfterLostState(t *testing.T) {
	e := newEnv(t)
	svc := &fakeService{}
	if _, err := e.run(t, hook.EventStop, e.payload(t, hook.EventStop), svc); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(e.opts.StateDir); err != nil {
		t.Fatal(err)
	}
	if _, err := e.run(t, hook.EventSessionEnd, e.payload(t, hook.EventSessionEnd), svc); err != nil {
		t.Fatal(err)
	}
	if got := len(svc.memories()); got != len(wantTranscript) {
		t.Fatalf("%d memories after re-ingestion, want %d", got, len(wantTranscript))
	}
	// A rewritten (shorter) transcript starts over, de-duplicated too.
	e.write(t, []byte(`{"type":"user","uuid":"a0000000-0000-4000-8000-000000000001","message":{"content":"The tide tables come from NOAA as CSV."}}`+"\n"))
	if _, err := e.run(t, hook.EventStop, e.payload(t, hook.EventStop), svc); err != nil {
		t.Fatal(err)
	}
	if got := len(svc.memories()); got != len(wantTranscript) {
		t.Fatalf("%d memories after a rewrite, want %d", got, len(wantTranscript))
	}
}

func TestIngestFailedAddRetries(t *testing.T) {
	e := newEnv(t)
	svc := &fakeService{failAdd: true}
	if _, err := e.run(t, hook.EventStop, e.payload(t, hook.EventStop), svc); err == nil {
		t.Fatal("failed Add: got no error")
	}
	svc.failAdd = false
	if _, err := e.run(t, hook.EventStop, e.payload(t, hook.EventStop), svc); err != nil {
		t.Fatal(err)
	}
	if got := len(svc.memories()); got != len(wantTranscript) {
		t.Fatalf("%d memories after retry, want %d", got, len(wantTranscript))
	}
}

func TestStateFiles(t *testing.T) {
	e := newEnv(t)
	if _, err := e.run(t, hook.EventStop, e.payload(t, hook.EventStop), &fakeService{}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(e.opts.StateDir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir: %v, %v; want mode 0700", fi.Mode(), err)
	}
	entries, err := os.ReadDir(e.opts.StateDir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("state dir holds %v (%v), want one state file and no lock", entries, err)
	}
	info, _ := entries[0].Info()
	if info.Mode().Perm() != 0o600 || !strings.HasSuffix(entries[0].Name(), ".json") {
		t.Fatalf("state file %s mode %v, want a .json file 0600", entries[0].Name(), info.Mode())
	}
}

func TestIngestLock(t *testing.T) {
	e := newEnv(t)
	svc := &fakeService{}
	if err := os.MkdirAll(e.opts.StateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Take the lock as another hook would: ingest once to learn the file
	// name, then plant a lock beside the state file.
	if _, err := e.run(t, hook.EventStop, e.payload(t, hook.EventStop), svc); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(e.opts.StateDir)
	lockFile := filepath.Join(e.opts.StateDir, strings.TrimSuffix(entries[0].Name(), ".json")+".lock")
	if err := os.WriteFile(lockFile, []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.appendLines(t, `{"type":"user","uuid":"l1","message":{"content":"while locked"}}`+"\n")
	if _, err := e.run(t, hook.EventStop, e.payload(t, hook.EventStop), svc); !errors.Is(err, hook.ErrBusy) {
		t.Fatalf("fresh lock: got %v, want ErrBusy", err)
	}
	e.opts.Clock = func() time.Time { return time.Now().Add(time.Hour) }
	if _, err := e.run(t, hook.EventStop, e.payload(t, hook.EventStop), svc); err != nil {
		t.Fatalf("stale lock: %v", err)
	}
	if got := len(svc.memories()); got != len(wantTranscript)+1 {
		t.Fatalf("%d memories, want %d", got, len(wantTranscript)+1)
	}
}

// hookOutput is the JSON a context hook prints.
type hookOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func TestContextEvents(t *testing.T) {
	tests := []struct {
		event      string
		wantPrompt string // a fragment of the prompt sent to Context
		want       []string
		notWant    []string
	}{
		{hook.EventUserPromptSubmit, "How should the tide tables be parsed", []string{"encoding/csv", "30-day cache"}, []string{"Porto"}},
		{hook.EventSessionStart, "tidepool project", []string{"tidepool project convention"}, []string{"Porto"}},
	}
	for _, tt := range tests {
		t.Run(tt.event, func(t *testing.T) {
			e := newEnv(t)
			svc := &fakeService{}
			seed := []api.NewMemory{
				{Text: "Parse the tide tables with encoding/csv, times in UTC.", Scope: e.repo},
				{Text: "Cache parsed tables for at most 30 days: a 30-day cache.", Scope: e.repo},
				{Text: "The tidepool project convention: errors wrapped with %w.", Scope: e.repo},
				{Text: "Parsed tables for Porto belong to another project.", Scope: "/elsewhere"},
			}
			if _, err := svc.Add(context.Background(), api.AddRequest{Memories: seed}); err != nil {
				t.Fatal(err)
			}
			e.opts.ContextTokens = 321
			out, err := e.run(t, tt.event, e.payload(t, tt.event), svc)
			if err != nil {
				t.Fatal(err)
			}
			var got hookOutput
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("output %q is not hook JSON: %v", out, err)
			}
			if got.HookSpecificOutput.HookEventName != tt.event {
				t.Errorf("hookEventName %q, want %q", got.HookSpecificOutput.HookEventName, tt.event)
			}
			ctxText := got.HookSpecificOutput.AdditionalContext
			if strings.Contains(ctxText, strings.TrimSpace(api.ContextHeader)) {
				t.Errorf("context repeats the service's header inside the hook's frame:\n%s", ctxText)
			}
			for _, w := range tt.want {
				if !strings.Contains(ctxText, w) {
					t.Errorf("context lacks %q:\n%s", w, ctxText)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(ctxText, w) {
					t.Errorf("context has %q from another scope:\n%s", w, ctxText)
				}
			}
			if len(svc.contexts) != 1 {
				t.Fatalf("%d Context calls, want 1", len(svc.contexts))
			}
			req := svc.contexts[0]
			if req.Scope != e.repo || req.MaxTokens != 321 || !strings.Contains(req.Prompt, tt.wantPrompt) {
				t.Errorf("Context request %+v, want scope %q (the git root), 321 tokens, prompt with %q", req, e.repo, tt.wantPrompt)
			}
		})
	}
}

func TestContextNothingRelevant(t *testing.T) {
	e := newEnv(t)
	for _, event := range []string{hook.EventUserPromptSubmit, hook.EventSessionStart} {
		out, err := e.run(t, event, e.payload(t, event), &fakeService{})
		if err != nil || out != "" {
			t.Errorf("%s on an empty store: output %q, error %v; want neither", event, out, err)
		}
	}
}

// TestSessionStartRecent checks the fallback: when nothing matches the
// session prompt, the newest memories of the project are shown, within
// the budget.
func TestSessionStartRecent(t *testing.T) {
	e := newEnv(t)
	svc := &fakeService{}
	var seed []api.NewMemory
	for i := range 30 {
		seed = append(seed, api.NewMemory{Text: "note " + strings.Repeat("x", 40) + " " + string(rune('A'+i)), Scope: e.repo,
			Time: time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC)})
	}
	if _, err := svc.Add(context.Background(), api.AddRequest{Memories: seed}); err != nil {
		t.Fatal(err)
	}
	e.opts.ContextTokens = 40 // room for two or three lines
	out, err := e.run(t, hook.EventSessionStart, e.payload(t, hook.EventSessionStart), svc)
	if err != nil {
		t.Fatal(err)
	}
	var got hookOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	c := got.HookSpecificOutput.AdditionalContext
	if !strings.Contains(c, "2026-01-30") || strings.Contains(c, "2026-01-01") {
		t.Errorf("context should hold the newest notes only:\n%s", c)
	}
	if n := strings.Count(c, "\n- "); n < 1 || n > 3 {
		t.Errorf("%d notes for a 40-token budget:\n%s", n, c)
	}
}

// TestFailOpen checks that a stuck or dead service, or a stdin that never
// closes, makes every hook return within its budget, printing nothing.
func TestFailOpen(t *testing.T) {
	const budget = 300 * time.Millisecond
	for _, svc := range []struct {
		name string
		svc  api.Service
	}{{"stuck", stuckService{}}, {"dead", stuckService{dead: true}}} {
		for _, event := range hook.Events {
			t.Run(svc.name+"/"+event, func(t *testing.T) {
				e := newEnv(t)
				e.opts.Timeout = budget
				start := time.Now()
				out, err := e.run(t, event, e.payload(t, event), svc.svc)
				if d := time.Since(start); d > budget+200*time.Millisecond {
					t.Errorf("took %v, budget %v", d, budget)
				}
				if err == nil || out != "" {
					t.Errorf("got output %q, error %v; want an error and no output", out, err)
				}
			})
		}
	}
	t.Run("stdin never closed", func(t *testing.T) {
		e := newEnv(t)
		e.opts.Timeout = budget
		pr, pw := io.Pipe()
		defer pw.Close()
		start := time.Now()
		err := hook.Claude(context.Background(), hook.EventStop, pr, io.Discard, &fakeService{}, e.opts)
		if d := time.Since(start); d > budget+200*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("took %v with %v; want a deadline error within %v", d, err, budget)
		}
	})
}

func TestBadInput(t *testing.T) {
	e := newEnv(t)
	stop := e.payload(t, hook.EventStop)
	tests := []struct {
		name, event, payload string
		want                 error
	}{
		{"unknown event", "PostToolUse", stop, hook.ErrUnknownEvent},
		{"event mismatch", hook.EventSessionEnd, stop, hook.ErrPayload},
		{"not JSON", hook.EventStop, "session_id=1", hook.ErrPayload},
		{"truncated JSON", hook.EventStop, stop[:40], hook.ErrPayload},
		{"wrong type", hook.EventStop, `{"session_id":5}`, hook.ErrPayload},
		{"bad UTF-8", hook.EventStop, "{\"prompt\":\"\xff\"}", hook.ErrPayload},
		{"huge", hook.EventStop, `{"prompt":"` + strings.Repeat("a", hook.MaxPayloadBytes) + `"}`, hook.ErrPayload},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &fakeService{}
			out, err := e.run(t, tt.event, tt.payload, svc)
			if !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
			if out != "" || len(svc.memories()) != 0 || svc.lists != 0 {
				t.Errorf("bad input printed %q and touched the store", out)
			}
		})
	}
	if _, err := hook.ParsePayload(strings.NewReader(`{}`)); err != nil {
		t.Errorf("empty object: %v", err)
	}
	if _, err := e.run(t, hook.EventStop, `{"hook_event_name":"Stop"}`, &fakeService{}); err != nil {
		t.Errorf("Stop without transcript: %v, want nothing to do", err)
	}
}

func FuzzParsePayload(f *testing.F) {
	for _, ev := range hook.Events {
		b, err := os.ReadFile(filepath.Join("testdata", ev+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"prompt":"\ud800","stop_hook_active":"yes"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := hook.ParsePayload(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, hook.ErrPayload) {
				t.Fatalf("error %v is not ErrPayload", err)
			}
			return
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		again, err := hook.ParsePayload(bytes.NewReader(b))
		if err != nil || again != p {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, p)
		}
	})
}
