package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/hook"
	"github.com/hmo-dev/hmo/internal/proctest"
	"github.com/hmo-dev/hmo/server"
)

// hookPayload is a UserPromptSubmit payload for a project in cwd.
func hookPayload(t *testing.T, cwd, prompt string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{
		"session_id": "s-1", "transcript_path": filepath.Join(cwd, "t.jsonl"), "cwd": cwd,
		"hook_event_name": "UserPromptSubmit", "prompt": prompt,
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stopDaemon stops the daemon of dir and checks that no hmo process of
// that store is left.
func stopDaemon(t *testing.T, dir string) {
	t.Helper()
	if r := execHMO(t, "", nil, "serve", "--stop", "--dir", dir); r.code != 0 {
		t.Errorf("serve --stop: %v", r)
	}
	if !proctest.Supported() {
		return
	}
	for _, p := range proctest.Running(hmoBinary(t)) {
		if strings.Contains(p.Cmdline, dir) {
			t.Errorf("process left behind: %+v", p)
		}
	}
}

// TestDaemonServesClients runs the daemon as the store's owner: the hook
// starts it on demand; CLI reads and writes go through it.
func TestDaemonServesClients(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	project := t.TempDir()
	if r := execHMO(t, "", nil, "add", "--dir", dir, "--scope", project, "tide tables are parsed with the NOAA harmonic constants"); r.code != 0 {
		t.Fatalf("add: %v", r)
	}
	r := execHMO(t, hookPayload(t, project, "how are tide tables parsed?"), nil, "hook", "claude", "UserPromptSubmit", "--dir", dir)
	t.Cleanup(func() { stopDaemon(t, dir) })
	var out struct {
		HookSpecificOutput struct {
			HookEventName, AdditionalContext string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); r.code != 0 || err != nil || !strings.Contains(out.HookSpecificOutput.AdditionalContext, "NOAA harmonic") {
		t.Fatalf("hook output: %v (%v)", r, err)
	}
	info, err := server.ReadInfo(dir)
	if err != nil || info.PID == 0 {
		t.Fatalf("the hook did not leave a daemon serving the store: %+v, %v", info, err)
	}
	steps := []struct {
		args []string
		out  string
	}{
		{[]string{"add", "--dir", dir, "--scope", project, "the cache lives in ~/.cache/tides"}, "2\n"},
		{[]string{"recall", "--dir", dir, "-k", "1", "where is the cache"}, "~/.cache/tides"},
		{[]string{"get", "--dir", dir, "1"}, "NOAA harmonic"},
		{[]string{"stats", "--dir", dir}, "hmo daemon, pid"},
	}
	for _, s := range steps {
		start := time.Now()
		r := execHMO(t, "", nil, s.args...)
		if r.code != 0 || !strings.Contains(r.stdout, s.out) {
			t.Errorf("hmo %s while the daemon holds the store: %v; want %q", strings.Join(s.args, " "), r, s.out)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("hmo %s took %s", s.args[0], d)
		}
	}
}

// TestHookFailsOpen checks that a hook that can reach no store still exits
// 0, prints nothing, and returns within its time budget.
func TestHookFailsOpen(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(blocker, "store") // cannot be created: no daemon, no store
	hmoBinary(t)                           // built before the clock starts
	for _, ev := range hook.Events {
		start := time.Now()
		r := execHMO(t, hookPayload(t, t.TempDir(), "anything"), nil, "hook", "claude", ev, "--dir", dir)
		took := time.Since(start)
		if r.code != 0 || r.stdout != "" {
			t.Errorf("hook %s without a store: %v; want exit 0 and no output", ev, r)
		}
		t.Logf("hook %s without a store: exit %d in %s", ev, r.code, took.Round(time.Millisecond))
		if took > hook.DefaultTimeout+time.Second {
			t.Errorf("hook %s without a store took %s, budget %s", ev, took, hook.DefaultTimeout)
		}
	}
	if r := execHMO(t, "", nil, "hook", "claude", "NoSuchEvent"); r.code != 0 {
		t.Errorf("unknown event: %v; want exit 0", r)
	}
}
