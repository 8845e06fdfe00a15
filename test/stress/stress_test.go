package stress_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/proctest"
	"github.com/hmo-dev/hmo/server"
)

// DefaultDuration is the length of the mixed workload without $HMO_STRESS.
const DefaultDuration = 10 * time.Second

// Clients: 4 MCP servers + 3 hook runners + 3 CLI runners = 10.
const (
	mcpClients  = 4
	hookClients = 3
	cliClients  = 3
)

// rig is the shared state of one stress run.
type rig struct {
	t       *testing.T
	bin     string
	dir     string // the store
	project string // the hooks' project (scope)
	env     []string
	led     ledger
	ops     sync.Map // op name -> *atomic.Int64
	stderr  lockedBuffer
}

func (r *rig) count(op string) {
	v, _ := r.ops.LoadOrStore(op, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

func (r *rig) fail(format string, args ...any) {
	r.t.Helper()
	r.count("errors")
	r.t.Errorf(format, args...)
}

// ledger records every acknowledged write.
type ledger struct {
	mu         sync.Mutex // guards the maps
	added      map[uint64]string
	superseded map[uint64]uint64 // old id -> new id, acknowledged
	deleted    map[uint64]bool   // acknowledged or in flight when a client was killed
}

func (l *ledger) add(id uint64, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.added[id] = text
}

// gone reports whether id was deleted, directly or as an older version of
// a deleted memory (delete removes the whole supersede chain). l.mu is held.
func (l *ledger) gone(id uint64) bool {
	for n := 0; id != 0 && n < len(l.superseded)+1; n++ {
		if l.deleted[id] {
			return true
		}
		id = l.superseded[id]
	}
	return false
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func duration(t *testing.T) time.Duration {
	s := os.Getenv("HMO_STRESS")
	if s == "" {
		return DefaultDuration
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("HMO_STRESS=%q: %v", s, err)
	}
	return d
}

// build compiles hmo with the race detector when the toolchain can.
func build(t *testing.T) (string, bool) {
	bin := filepath.Join(t.TempDir(), "hmo")
	cmd := exec.Command("go", "build", "-race", "-o", bin, "../../cmd/hmo")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err == nil {
		return bin, true
	} else {
		t.Logf("no race build (%v: %s); building without -race", err, out)
	}
	cmd = exec.Command("go", "build", "-o", bin, "../../cmd/hmo")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin, false
}

func TestStress(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process stress test: skipped with -short")
	}
	if !proctest.Supported() {
		t.Skip("the stress test counts processes through /proc: Linux only")
	}
	d := duration(t)
	bin, race := build(t)
	tmp := t.TempDir()
	r := &rig{
		t: t, bin: bin, dir: filepath.Join(tmp, "store"), project: filepath.Join(tmp, "project"),
		led: ledger{added: map[uint64]string{}, superseded: map[uint64]uint64{}, deleted: map[uint64]bool{}},
	}
	// Hooks keep their state under the cache directory: keep it here.
	// Transcripts live where Claude Code keeps them: the hook reads no other path.
	r.env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(tmp, "cache"), hmo.EnvDir+"="+r.dir, "CLAUDE_CONFIG_DIR="+filepath.Join(tmp, "claude"))
	if err := os.MkdirAll(filepath.Join(tmp, "claude", "projects", "-project"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(r.project, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for i := range mcpClients {
		wg.Add(1)
		go func() { defer wg.Done(); r.mcpClient(ctx, i) }()
	}
	// The first MCP call starts the daemon; CLI and hooks join once it is
	// up, so that their direct-open fallback does not race its start.
	r.waitDaemon(ctx)
	transcripts := make([]string, hookClients)
	for i := range hookClients {
		transcripts[i] = filepath.Join(tmp, "claude", "projects", "-project", fmt.Sprintf("transcript-%d.jsonl", i))
		wg.Add(1)
		go func() { defer wg.Done(); r.hookClient(ctx, i, transcripts[i]) }()
	}
	for i := range cliClients {
		wg.Add(1)
		go func() { defer wg.Done(); r.cliClient(ctx, i) }()
	}
	wg.Wait()
	// Flush: a last Stop per transcript, with time to spare.
	for i, tr := range transcripts {
		r.hook(context.Background(), "Stop", tr, fmt.Sprintf("hook-%d", i), "", 30*time.Second, false)
	}
	if out, err := exec.Command(bin, "serve", "--stop", "--dir", r.dir).CombinedOutput(); err != nil {
		t.Errorf("serve --stop: %v: %s", err, out)
	}
	left := r.leftBehind()
	lost, checked := r.verify(transcripts)
	if serveLog := filepath.Join(r.dir, "serve.log"); strings.Contains(r.stderr.String(), "DATA RACE") || fileContains(serveLog, "DATA RACE") {
		t.Errorf("the race detector fired in a child process:\n%s\nserve.log:\n%s", r.stderr.String(), raceReport(serveLog))
	}
	t.Logf("stress: %s, %d clients, race build %v: %s; %d acknowledged writes checked, %d lost; %d hmo processes left",
		d, mcpClients+hookClients+cliClients, race, r.summary(), checked, lost, len(left))
}

// raceReport is the first data race report in the file at path, at most
// 80 lines of it.
func raceReport(path string) string {
	b, _ := os.ReadFile(path)
	i := bytes.Index(b, []byte("WARNING: DATA RACE"))
	if i < 0 {
		return ""
	}
	lines := strings.SplitN(string(b[i:]), "\n", 81)
	return strings.Join(lines[:min(80, len(lines))], "\n")
}

func fileContains(path, s string) bool {
	b, _ := os.ReadFile(path)
	return bytes.Contains(b, []byte(s))
}

func (r *rig) summary() string {
	var parts []string
	r.ops.Range(func(k, v any) bool {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v.(*atomic.Int64).Load()))
		return true
	})
	return strings.Join(sortStrings(parts), " ")
}

func sortStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

func (r *rig) waitDaemon(ctx context.Context) {
	for ctx.Err() == nil {
		if in, err := server.ReadInfo(r.dir); err == nil && in.PID != 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// leftBehind waits briefly for hmo processes to end and reports the rest.
func (r *rig) leftBehind() []proctest.Proc {
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := proctest.Running(r.bin)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			r.t.Errorf("hmo processes left behind: %+v", left)
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mcpClient runs MCP servers one after another, each for a few seconds of
// tool calls, and kills each one hard.
func (r *rig) mcpClient(ctx context.Context, n int) {
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	for gen := 0; ctx.Err() == nil; gen++ {
		life, cancel := context.WithTimeout(ctx, time.Duration(2000+rng.IntN(4000))*time.Millisecond)
		r.mcpSession(life, rng, fmt.Sprintf("mcp-%d-%d", n, gen))
		cancel()
	}
}

func (r *rig) mcpSession(ctx context.Context, rng *rand.Rand, name string) {
	cmd := exec.Command(r.bin, "mcp", "--dir", r.dir)
	cmd.Env, cmd.Stderr = r.env, &r.stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: name}, nil).Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		r.fail("%s: connect: %v", name, err)
		return
	}
	r.count("mcp_servers")
	var mine []uint64
	for i := 0; ctx.Err() == nil; i++ {
		switch {
		case i%6 == 5 && len(mine) > 0:
			r.mcpUpdate(ctx, cs, name, &mine, rng)
		case i%9 == 8 && len(mine) > 0:
			r.mcpDelete(ctx, cs, name, &mine, rng)
		case i%2 == 0:
			text := fmt.Sprintf("%s note %d: the %s build uses flag f%d", name, i, name, rng.IntN(1000))
			var out struct{ IDs []uint64 }
			if r.mcpCall(ctx, cs, name, "memory_add", map[string]any{"text": text, "scope": "mcp"}, &out) && len(out.IDs) == 1 {
				r.led.add(out.IDs[0], text)
				mine = append(mine, out.IDs[0])
				r.count("writes_acked")
			}
		default:
			tool := []string{"memory_search", "memory_list", "memory_context", "memory_stats"}[rng.IntN(4)]
			args := map[string]any{"query": "build flag", "prompt": "which flags", "limit": 5, "scope": "mcp"}
			switch tool {
			case "memory_search":
				delete(args, "prompt")
				delete(args, "limit")
			case "memory_list":
				args = map[string]any{"limit": 5, "reverse": true}
			case "memory_context":
				args = map[string]any{"prompt": "which flags", "scope": "mcp"}
			case "memory_stats":
				args = map[string]any{}
			}
			r.mcpCall(ctx, cs, name, tool, args, nil)
		}
	}
	// Killed, not closed: the abrupt end an agent host may inflict.
	cmd.Process.Kill()
	cs.Close()
	cmd.Wait()
	r.count("mcp_kills")
}

func (r *rig) mcpUpdate(ctx context.Context, cs *sdk.ClientSession, name string, mine *[]uint64, rng *rand.Rand) {
	k := rng.IntN(len(*mine))
	old := (*mine)[k]
	text := fmt.Sprintf("%s corrected note for %d", name, old)
	var out struct{ ID, Supersedes uint64 }
	if r.mcpCall(ctx, cs, name, "memory_update", map[string]any{"id": old, "text": text}, &out) {
		r.led.mu.Lock()
		r.led.superseded[old] = out.ID
		r.led.added[out.ID] = text
		r.led.mu.Unlock()
		(*mine)[k] = out.ID
		r.count("writes_acked")
	}
}

func (r *rig) mcpDelete(ctx context.Context, cs *sdk.ClientSession, name string, mine *[]uint64, rng *rand.Rand) {
	k := rng.IntN(len(*mine))
	id := (*mine)[k]
	r.led.mu.Lock()
	r.led.deleted[id] = true // before the call: it may land even if the reply is lost
	r.led.mu.Unlock()
	*mine = append((*mine)[:k], (*mine)[k+1:]...)
	if r.mcpCall(ctx, cs, name, "memory_delete", map[string]any{"ids": []uint64{id}}, nil) {
		r.count("writes_acked")
	}
}

// mcpCall calls a tool; a failure after ctx ended (the session is being
// killed) is not an error of the system under test.
func (r *rig) mcpCall(ctx context.Context, cs *sdk.ClientSession, name, tool string, args map[string]any, out any) bool {
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if ctx.Err() != nil {
		return false
	}
	r.count(tool)
	if err != nil || res.IsError {
		msg := fmt.Sprint(err)
		if res != nil && len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*sdk.TextContent); ok {
				msg = tc.Text
			}
		}
		r.fail("%s: %s(%v): %s", name, tool, args, msg)
		return false
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			r.fail("%s: %s result: %v", name, tool, err)
			return false
		}
	}
	return true
}

// hookClient appends turns to a transcript and runs the Claude Code hooks
// on it as short-lived processes; some are killed mid-run.
func (r *rig) hookClient(ctx context.Context, n int, transcript string) {
	session := fmt.Sprintf("hook-%d", n)
	f, err := os.OpenFile(transcript, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		r.fail("transcript: %v", err)
		return
	}
	defer f.Close()
	rng := rand.New(rand.NewPCG(uint64(n), 2))
	for i := 0; ctx.Err() == nil; i++ {
		fmt.Fprintln(f, turnLine(session, r.project, i, fmt.Sprintf("%s turn %d: remember that tide station %d reports in feet", session, i, rng.IntN(10000))))
		event := "Stop"
		if i%3 == 1 {
			event = "UserPromptSubmit"
		}
		r.hook(ctx, event, transcript, session, "tide station", 10*time.Second, i%4 == 3)
	}
}

// hook runs one hook process; kill ends it after a few milliseconds.
func (r *rig) hook(ctx context.Context, event, transcript, session, prompt string, budget time.Duration, kill bool) {
	payload, _ := json.Marshal(map[string]any{
		"session_id": session, "transcript_path": transcript, "cwd": r.project,
		"hook_event_name": event, "prompt": prompt,
	})
	cmd := exec.Command(r.bin, "hook", "--dir", r.dir, "--timeout", budget.String(), "claude", event)
	cmd.Env, cmd.Stdin = r.env, bytes.NewReader(payload)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = new(bytes.Buffer), &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.fail("hook: %v", err)
		return
	}
	if kill {
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		r.count("hook_kills")
		return
	}
	err := cmd.Wait()
	r.count("hook_" + event)
	r.stderr.Write(stderr.Bytes())
	if err != nil {
		r.fail("hook %s exited with %v: %s", event, err, stderr.String())
	}
	if took := time.Since(start); took > budget+2*time.Second {
		r.fail("hook %s took %s, budget %s", event, took, budget)
	}
	if stderr.Len() > 0 && ctx.Err() == nil {
		r.fail("hook %s reported: %s", event, stderr.String())
	}
}

// turnLine is one user turn of a Claude Code transcript.
func turnLine(session, cwd string, i int, text string) string {
	b, _ := json.Marshal(map[string]any{
		"type": "user", "sessionId": session, "cwd": cwd, "isSidechain": false,
		"uuid":      fmt.Sprintf("%s-%08d", session, i),
		"timestamp": time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano),
		"message":   map[string]any{"role": "user", "content": text},
	})
	return string(b)
}

// cliClient runs CLI commands: add (acknowledged by the printed id),
// recall, get (checked against the ledger) and stats.
func (r *rig) cliClient(ctx context.Context, n int) {
	rng := rand.New(rand.NewPCG(uint64(n), 3))
	var mine []uint64
	for i := 0; ctx.Err() == nil; i++ {
		switch i % 4 {
		case 0:
			text := fmt.Sprintf("cli-%d fact %d: the backup runs at %02d:00", n, i, rng.IntN(24))
			out, ok := r.cli("add", "--dir", r.dir, "--scope", "cli", text)
			if id, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64); ok && err == nil {
				r.led.add(id, text)
				mine = append(mine, id)
				r.count("writes_acked")
			} else if ok {
				r.fail("add printed %q", out)
			}
		case 1:
			r.cli("recall", "--dir", r.dir, "-k", "3", "when does the backup run")
		case 2:
			if len(mine) > 0 {
				id := mine[rng.IntN(len(mine))]
				out, ok := r.cli("get", "--dir", r.dir, "--json", strconv.FormatUint(id, 10))
				var rec engine.Record
				if ok && (json.Unmarshal([]byte(out), &rec) != nil || rec.Text != r.text(id)) {
					r.fail("get %d = %q, want %q", id, out, r.text(id))
				}
			}
		case 3:
			r.cli("stats", "--dir", r.dir, "--json")
		}
	}
}

func (r *rig) text(id uint64) string {
	r.led.mu.Lock()
	defer r.led.mu.Unlock()
	return r.led.added[id]
}

func (r *rig) cli(args ...string) (string, bool) {
	cmd := exec.Command(r.bin, args...)
	cmd.Env = r.env
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	r.count("cli_" + args[0])
	r.stderr.Write(stderr.Bytes())
	if err != nil {
		r.fail("hmo %s: %v: %s", strings.Join(args, " "), err, stderr.String())
		return "", false
	}
	return out.String(), true
}

// verify opens the store directly (the daemon is stopped) and checks every
// acknowledged write and every transcript turn; it returns the number of
// lost writes and of checks made.
func (r *rig) verify(transcripts []string) (lost, checked int) {
	e, err := hmo.Open(r.dir, nil)
	if err != nil {
		r.t.Fatalf("open the store after the run: %v", err)
	}
	defer e.Close()
	r.led.mu.Lock()
	defer r.led.mu.Unlock()
	for id, text := range r.led.added {
		if r.led.gone(id) {
			continue
		}
		checked++
		rec, err := e.Get(id)
		if err != nil || rec.Text != text {
			lost++
			r.t.Errorf("acknowledged write %d lost: got %q, %v; want %q", id, rec.Text, err, text)
			continue
		}
		if next, ok := r.led.superseded[id]; ok && rec.SupersededBy != next {
			lost++
			r.t.Errorf("update of %d to %d lost: superseded by %d", id, next, rec.SupersededBy)
		}
	}
	// Every transcript turn is stored exactly once.
	stored := map[string]int{}
	e.Scan(func(rec *engine.Record) error {
		if rec.Scope == r.project {
			stored[rec.Text]++
		}
		return nil
	})
	for _, tr := range transcripts {
		b, err := os.ReadFile(tr)
		if err != nil {
			r.t.Error(err)
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var turn struct {
				Message struct{ Content string }
			}
			if json.Unmarshal([]byte(line), &turn) != nil {
				continue
			}
			checked++
			if n := stored[turn.Message.Content]; n != 1 {
				lost++
				r.t.Errorf("transcript turn %q stored %d times, want once", turn.Message.Content, n)
			}
		}
	}
	return lost, checked
}
