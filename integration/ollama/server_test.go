//go:build ollama

package ollama_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/internal/proctest"
	"github.com/hmo-dev/hmo/localllm/ollama"
)

// tinyModel is the name the tiny model is registered under.
const tinyModel = "hmo-tiny"

// server is an Ollama server started by the test.
type server struct {
	bin  string
	host string // 127.0.0.1:port
	env  []string
	cmd  *exec.Cmd
	log  *os.File
}

// startServer starts 'ollama serve' on a free loopback port with its
// models in a temporary directory, and registers the tiny model.
func startServer(t *testing.T) *server {
	t.Helper()
	bin := os.Getenv("HMO_OLLAMA_BIN")
	if bin == "" {
		t.Skip("SKIPPED LOUDLY: HMO_OLLAMA_BIN is not set, so there is no Ollama server to test against; run 'make test-ollama', which builds one")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("HMO_OLLAMA_BIN=%s: %v", bin, err)
	}
	tmp := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close()
	s := &server{bin: bin, host: host, env: append(os.Environ(),
		"OLLAMA_HOST="+host,
		"OLLAMA_MODELS="+filepath.Join(tmp, "models"),
		"HOME="+tmp,
		"OLLAMA_NOPRUNE=1",
		"OLLAMA_KEEP_ALIVE=10m",
		"OLLAMA_NUM_PARALLEL=1",
	)}
	logPath := filepath.Join(tmp, "serve.log")
	if p := os.Getenv("HMO_OLLAMA_LOG"); p != "" {
		logPath = p // kept after the test, for a look at the server's side
	}
	s.start(t, logPath)
	gguf := filepath.Join(tmp, "tiny.gguf")
	if err := writeTinyGGUF(gguf, 4); err != nil {
		t.Fatalf("write tiny GGUF: %v", err)
	}
	mf := filepath.Join(tmp, "Modelfile")
	if err := os.WriteFile(mf, []byte("FROM "+gguf+"\nPARAMETER num_ctx 2048\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "create", tinyModel, "-f", mf)
	cmd.Env = s.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ollama create: %v\n%s", err, out)
	}
	return s
}

func (s *server) start(t *testing.T, logPath string) {
	t.Helper()
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	s.log = f
	s.cmd = exec.Command(s.bin, "serve")
	s.cmd.Env, s.cmd.Stdout, s.cmd.Stderr = s.env, f, f
	// A process group of its own: the model runners the server starts
	// ('ollama runner') are in it, and are killed with it.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("ollama serve: %v", err)
	}
	t.Cleanup(func() { s.kill(); f.Close(); noneLeft(t, s.bin) })
	c, _ := ollama.New(&ollama.Options{Host: s.host, Retries: -1, CallTimeout: time.Second})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := c.Version(context.Background()); err == nil {
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("ollama serve did not answer on %s within 60s; log:\n%s", s.host, tail(string(b), 3000))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// kill stops the server and its runners at once, as a crash would.
func (s *server) kill() {
	if s.cmd != nil && s.cmd.Process != nil && s.cmd.ProcessState == nil {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) // the whole group
		s.cmd.Wait()
	}
}

// noneLeft fails the test if a process of the Ollama binary (the server or
// an 'ollama runner') is still alive shortly after the server was killed.
// Zombies awaiting their reaper do not count.
func noneLeft(t *testing.T, bin string) {
	t.Helper()
	if !proctest.Supported() {
		t.Log("cannot list processes here: the check for leftover Ollama processes is skipped")
		return
	}
	var alive []proctest.Proc
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		alive = alive[:0]
		for _, p := range proctest.Running(bin) {
			if p.State != "Z" {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, p := range alive {
		t.Errorf("process left after the Ollama server was killed: pid %d %s", p.PID, p.Cmdline)
		syscall.Kill(p.PID, syscall.SIGKILL) // do not leave it to the next run
	}
}

func (s *server) url() string { return "http://" + s.host }

// logTail returns the end of the server's log without goroutine dumps.
func (s *server) logTail(n int) string {
	b, _ := os.ReadFile(s.log.Name())
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if l == "" || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "goroutine ") || strings.Contains(l, "(0x") || strings.HasPrefix(l, "r") && len(l) < 24 {
			continue
		}
		keep = append(keep, l)
	}
	return tail(strings.Join(keep, "\n"), n)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func fmtSteps(v any) string { return strings.ReplaceAll(fmt.Sprintf("%+v", v), "} {", "}\n{") }
