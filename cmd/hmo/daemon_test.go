package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

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
		{[]string{"list", "--dir", dir, "--reverse", "--limit", "1"}, "~/.cache/tides"},
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
	// A command that needs the store to itself says what to do.
	r = execHMO(t, "", nil, "forget", "--dir", dir, "1")
	if want := fmt.Sprintf("the hmo daemon (pid %d) serves it; stop it with 'hmo serve --stop'", info.PID); r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("forget while the daemon holds the store: %v; want exit 1 and %q", r, want)
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

// bearerTransport adds the token to every request.
type bearerTransport struct{ tok string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPStreamableHTTP serves MCP over loopback HTTP, behind the token.
func TestMCPStreamableHTTP(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(hmoBinary(t), "mcp", "--no-daemon", "--dir", dir, "--http", addr)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("hmo mcp --http after SIGINT: %v\n%s", err, stderr.String())
		}
	}()
	// Ready once it accepts connections (stderr is read only after Wait).
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
	}
	tok, err := server.ReadToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+addr, "application/json", strings.NewReader(`{}`))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("request without token: %v %v; want 401", resp, err)
	}
	resp.Body.Close()
	ctx := context.Background()
	tr := &sdk.StreamableClientTransport{Endpoint: "http://" + addr, HTTPClient: &http.Client{Transport: bearerTransport{tok}}, DisableStandaloneSSE: true}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "memory_add", Arguments: map[string]any{"text": "over http"}})
	if err != nil || res.IsError {
		t.Fatalf("memory_add over HTTP: %+v, %v", res, err)
	}
	if r := execHMO(t, "", nil, "recall", "--dir", dir, "over http"); r.code != 0 || !strings.Contains(r.stdout, "over http") {
		t.Errorf("recall after an HTTP add: %v", r)
	}
	if r := execHMO(t, "", nil, "mcp", "--dir", dir, "--http", "0.0.0.0:0"); r.code != 2 {
		t.Errorf("mcp --http on a public address: %v; want a usage error", r)
	}
}

// TestHookStateLivesInTheStore checks that the transcript offsets of the
// Stop hook are kept under the store directory (0700), so that another
// store ingests the same transcript afresh.
func TestHookStateLivesInTheStore(t *testing.T) {
	project := t.TempDir()
	transcript, err := os.ReadFile("../../claudecode/testdata/transcript.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// The hook reads transcripts only where Claude Code keeps them.
	claudeDir := t.TempDir()
	tpath := filepath.Join(claudeDir, "projects", "-project", "t.jsonl")
	if err := os.MkdirAll(filepath.Dir(tpath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tpath, transcript, 0o600); err != nil {
		t.Fatal(err)
	}
	payload := strings.Replace(hookPayload(t, project, ""), `"UserPromptSubmit"`, `"Stop"`, 1)
	payload = strings.Replace(payload, filepath.Join(project, "t.jsonl"), tpath, 1)
	claudeEnv := []string{"CLAUDE_CONFIG_DIR=" + claudeDir}
	var ingested []string
	for _, name := range []string{"one", "two"} {
		dir := filepath.Join(t.TempDir(), name)
		if r := execHMO(t, "", nil, "init", "--dir", dir); r.code != 0 {
			t.Fatalf("init: %v", r)
		}
		t.Cleanup(func() { stopDaemon(t, dir) })
		if r := execHMO(t, payload, claudeEnv, "hook", "claude", "Stop", "--dir", dir); r.code != 0 || r.stderr != "" {
			t.Fatalf("hook Stop: %v", r)
		}
		fi, err := os.Stat(filepath.Join(dir, "hook"))
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: hook state dir: %v, %v; want a 0700 directory in the store", name, fi, err)
		}
		r := execHMO(t, "", nil, "stats", "--json", "--dir", dir)
		ingested = append(ingested, r.stdout)
	}
	for i, s := range ingested {
		if strings.Contains(s, `"records": 0`) || !strings.Contains(s, `"records"`) {
			t.Errorf("store %d after Stop: stats %s; want the transcript's turns", i+1, s)
		}
	}
}

// TestServeDetach checks that serve --detach returns once the daemon
// answers, and that with a daemon already running it reports that
// daemon's pid instead of starting one that exits at once.
func TestServeDetach(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	r := execHMO(t, "", nil, "serve", "--detach", "--dir", dir, "--idle", "2m")
	t.Cleanup(func() { stopDaemon(t, dir) })
	pid, err := strconv.Atoi(strings.TrimSpace(r.stdout))
	if r.code != 0 || err != nil {
		t.Fatalf("serve --detach: %v", r)
	}
	// No wait: the daemon must already answer.
	info, err := server.ReadInfo(dir)
	if err != nil || info.PID != pid {
		t.Fatalf("right after serve --detach: serve.json %+v, %v; want pid %d", info, err, pid)
	}
	if r := execHMO(t, "", nil, "stats", "--dir", dir); !strings.Contains(r.stdout, fmt.Sprintf("hmo daemon, pid %d", pid)) {
		t.Errorf("stats right after serve --detach: %v; want it served by pid %d", r, pid)
	}
	// The daemon logs with slog to serve.log: info by default off a
	// terminal, so no request lines.
	logged, err := os.ReadFile(filepath.Join(dir, "serve.log"))
	if err != nil || !strings.Contains(string(logged), fmt.Sprintf("level=INFO msg=serving pid=%d", pid)) || strings.Contains(string(logged), "msg=request") {
		t.Errorf("serve.log (%v):\n%s\nwant the start at level INFO and no request lines", err, logged)
	}
	// Again: the running daemon is reported, truthfully.
	r = execHMO(t, "", nil, "serve", "--detach", "--dir", dir)
	if r.code != 0 || strings.TrimSpace(r.stdout) != strconv.Itoa(pid) || !strings.Contains(r.stderr, fmt.Sprintf("daemon pid %d already serves", pid)) {
		t.Errorf("serve --detach with a daemon running: %v; want pid %d reported as already serving", r, pid)
	}
	var d struct {
		PID     int  `json:"pid"`
		Started bool `json:"started"`
	}
	r = execHMO(t, "", nil, "serve", "--detach", "--json", "--dir", dir)
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil || d.PID != pid || d.Started {
		t.Errorf("serve --detach --json with a daemon running: %v (%v); want pid %d, started false", r, err, pid)
	}
	if proctest.Supported() {
		n := 0
		for _, p := range proctest.Running(hmoBinary(t)) {
			if strings.Contains(p.Cmdline, dir) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d hmo processes serve %s, want the one daemon", n, dir)
		}
	}
	if r := execHMO(t, "", nil, "serve", "--dir", unusedDir(t), "--log-level", "loud"); r.code != 2 || !strings.Contains(r.stderr, `--log-level "loud"`) {
		t.Errorf("serve --log-level loud: %v; want exit 2", r)
	}
	// A daemon that cannot start: the launcher says so, with its log.
	bad := filepath.Join(t.TempDir(), "bad")
	r = execHMO(t, "", nil, "serve", "--detach", "--dir", bad, "--addr", "192.0.2.1:0")
	if r.code != 1 || !strings.Contains(r.stderr, "exited before it answered") || !strings.Contains(r.stderr, "loopback") {
		t.Errorf("serve --detach of a daemon that fails: %v; want exit 1 with the daemon's log", r)
	}
}

// unusedDir is a store directory for a command that must fail before using it.
func unusedDir(t *testing.T) string { return filepath.Join(t.TempDir(), "unused") }

// TestRecallLimitsWithAndWithoutDaemon checks that recall has the same
// limits whether it opens the store or asks the daemon, which pages
// through the API (at most 50 results a page) to give -k results.
func TestRecallLimitsWithAndWithoutDaemon(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	var lines strings.Builder
	for i := range 80 {
		fmt.Fprintf(&lines, "{\"text\":\"note %d: the cat sleeps on the warm laptop\"}\n", i)
	}
	if r := execHMO(t, lines.String(), nil, "import", "-", "--dir", dir); r.code != 0 {
		t.Fatalf("import: %v", r)
	}
	check := func(how string) {
		t.Helper()
		r := execHMO(t, "", nil, "recall", "cat laptop", "-k", "70", "--json", "--dir", dir)
		var res []json.RawMessage
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != 0 || len(res) != 70 {
			t.Errorf("recall -k 70 %s: %d results (%v), exit %d %s; want 70", how, len(res), err, r.code, r.stderr)
		}
		if r := execHMO(t, "", nil, "recall", "cat", "-k", "201", "--dir", dir); r.code != 2 || !strings.Contains(r.stderr, "k=201 outside [1, 200]") {
			t.Errorf("recall -k 201 %s: %v; want exit 2", how, r)
		}
	}
	check("on the store")
	if r := execHMO(t, "", nil, "serve", "--detach", "--dir", dir); r.code != 0 {
		t.Fatalf("serve --detach: %v", r)
	}
	t.Cleanup(func() { stopDaemon(t, dir) })
	check("through the daemon")
}

// TestDaemonUsesTheModels checks that the daemon opens the store with the
// models it is given (flags, or the environment it inherits from the
// command that starts it): the LLM steps run in the daemon too.
func TestDaemonUsesTheModels(t *testing.T) {
	host := fakeOllama(t)
	for _, tt := range []struct {
		name    string
		environ []string
		args    []string
	}{
		{"flags", nil, []string{"--ollama-host", host, "--chat-model", "fake-chat"}},
		{"environment", []string{"OLLAMA_HOST=" + host, envChatModel + "=fake-chat"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			if r := execHMO(t, "", nil, "init", "--dir", dir); r.code != 0 {
				t.Fatalf("init: %v", r)
			}
			r := execHMO(t, "", tt.environ, append([]string{"serve", "--detach", "--dir", dir}, tt.args...)...)
			t.Cleanup(func() { stopDaemon(t, dir) })
			if r.code != 0 {
				t.Fatalf("serve --detach: %v", r)
			}
			var s struct {
				LLM bool `json:"llm"`
			}
			r = execHMO(t, "", nil, "stats", "--json", "--dir", dir)
			if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || !s.LLM {
				t.Errorf("stats through the daemon: %v (%v); want the LLM steps on", r, err)
			}
		})
	}
}
