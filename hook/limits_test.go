package hook_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/hook"
)

// stopPayload is a Stop payload naming path as the transcript.
func stopPayload(t *testing.T, e *env, path string) string {
	t.Helper()
	p := e.payload(t, hook.EventStop)
	return strings.Replace(p, e.transcript, path, 1)
}

// runBounded runs the hook and fails the test if it does not return
// within limit (the hook would otherwise hang the test run).
func runBounded(t *testing.T, e *env, payload string, svc *fakeService, limit time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := e.run(t, hook.EventStop, payload, svc)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("the hook did not return within %s", limit)
		return nil
	}
}

// TestRefusedTranscripts is finding 1 of issue 14: the Stop hook read
// whatever transcript_path said (/dev/zero spun forever, a FIFO with no
// writer blocked, /etc/shadow was opened and its offset recorded).
// Every path that is not a regular *.jsonl file of the user's under
// Claude Code's transcript directories is refused at once, and nothing
// is written about it.
func TestRefusedTranscripts(t *testing.T) {
	e := newEnv(t)
	projects := filepath.Dir(e.transcript)
	fifo := filepath.Join(projects, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	linkOut := filepath.Join(projects, "passwd.jsonl")
	if err := os.Symlink("/etc/passwd", linkOut); err != nil {
		t.Fatal(err)
	}
	dirJSONL := filepath.Join(projects, "dir.jsonl")
	if err := os.Mkdir(dirJSONL, 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	if err := os.WriteFile(outside, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	devLink := filepath.Join(projects, "zero.jsonl")
	if err := os.Symlink("/dev/zero", devLink); err != nil {
		t.Fatal(err)
	}
	notJSONL := filepath.Join(projects, "notes.txt")
	if err := os.WriteFile(notJSONL, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/dev/zero", "/dev/urandom", "/etc/passwd", "/etc/shadow", fifo, linkOut, dirJSONL, outside, devLink,
		notJSONL, "relative/t.jsonl", projects + "/../" + filepath.Base(outside),
	} {
		t.Run(path, func(t *testing.T) {
			svc := &fakeService{}
			err := runBounded(t, e, stopPayload(t, e, path), svc, 5*time.Second)
			if !errors.Is(err, hook.ErrTranscript) {
				t.Fatalf("got %v, want ErrTranscript", err)
			}
			if len(svc.adds) != 0 {
				t.Errorf("%d Add calls for a refused path", len(svc.adds))
			}
			if entries, _ := os.ReadDir(e.opts.StateDir); len(entries) != 0 {
				t.Errorf("state written about a refused path: %v", entries)
			}
		})
	}
}

// TestTranscriptReadBounded: a sparse 2 GiB transcript of zeros took 25 s;
// a run now reads at most MaxReadBytes and returns within its budget.
func TestTranscriptReadBounded(t *testing.T) {
	e := newEnv(t)
	if err := os.Truncate(e.transcript, 2<<30); err != nil {
		t.Skipf("LOUD SKIP: cannot make a sparse file: %v", err)
	}
	e.opts.MaxReadBytes = 1 << 20
	e.opts.Timeout = 2 * time.Second
	svc := &fakeService{}
	start := time.Now()
	if err := runBounded(t, e, e.payload(t, hook.EventStop), svc, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// The turns before the zeros are ingested; the zeros (no newline in
	// the first MiB) are left for later runs, bounded each time.
	if got := len(svc.memories()); got != len(wantTranscript) {
		t.Fatalf("%d memories, want %d", got, len(wantTranscript))
	}
	t.Logf("sparse 2 GiB transcript: %s", time.Since(start))
}

// TestTranscriptReadHonoursDeadline: the transcript reader stops at the
// hook's deadline, even in the middle of a large file.
func TestTranscriptReadHonoursDeadline(t *testing.T) {
	e := newEnv(t)
	if err := os.Truncate(e.transcript, 8<<30); err != nil {
		t.Skipf("LOUD SKIP: cannot make a sparse file: %v", err)
	}
	e.opts.MaxReadBytes = 8 << 30 // only the deadline bounds this run
	e.opts.Timeout = 300 * time.Millisecond
	err := runBounded(t, e, e.payload(t, hook.EventStop), &fakeService{}, 3*time.Second)
	if err == nil {
		t.Fatal("8 GiB read within 300 ms: got no error, want the deadline")
	}
}

// TestHookWallClock: whatever the work is blocked on, the hook returns
// at its deadline (plus a short grace).
func TestHookWallClock(t *testing.T) {
	e := newEnv(t)
	e.opts.Timeout = 200 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		done <- hook.Claude(context.Background(), hook.EventStop, blockingReader{}, os.Stdout, &fakeService{}, e.opts)
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("no error from a hook whose stdin never ends")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("hook did not return at its deadline")
	}
}

// blockingReader blocks forever and ignores everything.
type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

// FuzzClaude runs every hook event on arbitrary payloads (transcript
// paths included) against a real transcript directory: the hook never
// panics, returns within its deadline, and writes no state for a path
// it refused.
func FuzzClaude(f *testing.F) {
	root := f.TempDir()
	projects := filepath.Join(root, "projects", "-p")
	if err := os.MkdirAll(projects, 0o700); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile("testdata/transcript.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	transcript := filepath.Join(projects, "s.jsonl")
	if err := os.WriteFile(transcript, data, 0o600); err != nil {
		f.Fatal(err)
	}
	for i, p := range []string{
		`{"session_id":"s","transcript_path":"` + transcript + `","cwd":"/tmp","hook_event_name":"Stop"}`,
		`{"transcript_path":"/dev/zero"}`, `{"transcript_path":"/etc/shadow"}`, `{"transcript_path":"` + projects + `/../../x.jsonl"}`,
		`{"prompt":"what do I know","cwd":"/tmp"}`, `{"transcript_path":"\ud800"}`, `[]`, ``,
	} {
		f.Add(uint8(i), []byte(p))
	}
	f.Fuzz(func(t *testing.T, ev uint8, payload []byte) {
		event := hook.Events[int(ev)%len(hook.Events)]
		state := t.TempDir()
		opts := &hook.Options{StateDir: state, Timeout: 500 * time.Millisecond, TranscriptRoots: []string{filepath.Join(root, "projects")}}
		done := make(chan error, 1)
		go func() {
			done <- hook.Claude(context.Background(), event, strings.NewReader(string(payload)), io.Discard, &fakeService{}, opts)
		}()
		select {
		case err := <-done:
			if errors.Is(err, hook.ErrTranscript) {
				if entries, _ := os.ReadDir(state); len(entries) != 0 {
					t.Fatalf("state written for a refused path: %v", entries)
				}
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("%s %q: no return within 3 s", event, payload)
		}
	})
}
