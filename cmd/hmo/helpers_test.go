package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
)

// conversation is the sample conversation bundled with the repository.
const conversation = "../../testdata/conversation.jsonl"

// conversationRecords is the number of lines in conversation.
const conversationRecords = 34

// tmpRoot holds what outlives a single test: the built binary.
var tmpRoot string

func TestMain(m *testing.M) {
	var err error
	if tmpRoot, err = os.MkdirTemp("", "hmo-cmd-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// A test that forgets --dir must not touch the user's real store.
	os.Setenv(hmo.EnvDir, filepath.Join(tmpRoot, "default-store"))
	os.Setenv("XDG_DATA_HOME", filepath.Join(tmpRoot, "xdg"))
	code := m.Run()
	os.RemoveAll(tmpRoot)
	os.Exit(code)
}

// result is what one hmo invocation printed and returned.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// hmoRun runs hmo in-process with stdin and args; $HMO_DIR is unset.
func hmoRun(t testing.TB, stdin string, args ...string) result {
	t.Helper()
	return hmoRunEnv(t, nil, stdin, args...)
}

// hmoRunEnv runs hmo in-process with the given environment.
func hmoRunEnv(t testing.TB, environ map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{
		stdin:  strings.NewReader(stdin),
		stdout: &out, stderr: &errb,
		getenv: func(k string) string { return environ[k] },
	}
	code := run(context.Background(), e, args)
	return result{out.String(), errb.String(), code}
}

// mustRun runs hmo in-process and fails the test unless it exits 0.
func mustRun(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	r := hmoRun(t, stdin, args...)
	if r.code != 0 {
		t.Fatalf("hmo %s: %v", strings.Join(args, " "), r)
	}
	return r.stdout
}

// newStore returns the directory of a fresh store holding the bundled
// conversation.
func newStore(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	out := mustRun(t, "", "import", "--dir", dir, conversation)
	if want := fmt.Sprintf("imported %d record(s)\n", conversationRecords); out != want {
		t.Fatalf("import printed %q, want %q", out, want)
	}
	return dir
}

// stats runs hmo stats --json.
func stats(t *testing.T, dir string) engine.Stats {
	t.Helper()
	var s engine.Stats
	decode(t, mustRun(t, "", "stats", "--dir", dir, "--json"), &s)
	return s
}

// snapshot is what must not change when a command fails: every record as
// exported, the record count and the change-log sequence (which any write
// advances).
type snapshot struct {
	export  string
	records int
	logSeq  uint64
}

func takeSnapshot(t *testing.T, dir string) snapshot {
	t.Helper()
	s := stats(t, dir)
	return snapshot{mustRun(t, "", "export", "--dir", dir), s.Records, s.LogSeq}
}

func decode(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, s)
	}
}

// writeFile writes data to name in a fresh temporary directory.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// hmoBinary builds the hmo command once per test run (CGO off, as shipped).
func hmoBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binPath = filepath.Join(tmpRoot, "hmo")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// execHMO runs the built binary with stdin, args and extra environment
// variables ("K=V").
// execTimeout bounds one hmo command run by a test.
const execTimeout = 3 * time.Minute

func execHMO(t *testing.T, stdin string, environ []string, args ...string) result {
	t.Helper()
	// A command that hangs is killed rather than left behind as an
	// orphan when the test binary times out.
	ctx, cancel := context.WithTimeout(context.Background(), execTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, hmoBinary(t), args...)
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), environ...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("hmo %s: still running after %v, killed", strings.Join(args, " "), execTimeout)
	}
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run hmo %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}
