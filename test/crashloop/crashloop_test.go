package crashloop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/server"
)

// outcome is what one write path's crash loop found.
type outcome struct {
	path       string
	kills      int // SIGKILLs delivered while the write ran
	writes     int // writes acknowledged in the end (after retries)
	lost       int // acknowledged texts missing from the store
	duplicated int // texts stored more than once after retries
	unopenable int // times the store could not be opened after a kill
	retries    int
}

func kills(t *testing.T) int {
	s := os.Getenv("HMO_CRASHLOOP")
	if s == "" {
		t.Skip("LOUD SKIP: the crash loop runs with $HMO_CRASHLOOP=<kills per path> (make crash-loop)")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("HMO_CRASHLOOP=%q: want a number of kills", s)
	}
	return n
}

func build(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "hmo")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/hmo")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type rig struct {
	t   *testing.T
	bin string
	env []string
	rng *rand.Rand
}

func (r *rig) cmd(args ...string) *exec.Cmd {
	c := exec.Command(r.bin, args...)
	c.Env = r.env
	return c
}

// runKilled starts args and SIGKILLs it after a random delay in
// [0, max); it reports whether the kill came before the command ended.
func (r *rig) runKilled(max time.Duration, args ...string) (killed bool, err error) {
	c := r.cmd(args...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		return false, err
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		return false, err
	case <-time.After(time.Duration(r.rng.Int64N(int64(max)))):
		c.Process.Kill()
		<-done
		return true, nil
	}
}

// opens checks the store opens and answers (stats).
func (r *rig) opens(dir string) bool {
	out, err := r.cmd("stats", "--json", "--dir", dir).CombinedOutput()
	if err != nil {
		r.t.Logf("store %s does not open: %v: %s", dir, err, out)
	}
	return err == nil
}

// texts counts the stored texts.
func (r *rig) texts(dir string) map[string]int {
	out, err := r.cmd("export", "--dir", dir).Output()
	if err != nil {
		r.t.Fatalf("export: %v", err)
	}
	n := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var rec struct{ Text string }
		if l != "" && json.Unmarshal([]byte(l), &rec) == nil {
			n[rec.Text]++
		}
	}
	return n
}

func (o *outcome) tally(stored map[string]int, acked []string) {
	want := map[string]bool{}
	for _, a := range acked {
		want[a] = true
		if stored[a] == 0 {
			o.lost++
		}
	}
	for text, n := range stored {
		if n > 1 && want[text] {
			o.duplicated += n - 1
		}
	}
	o.writes = len(acked)
}

// TestCrashLoop kills each write path $HMO_CRASHLOOP times.
func TestCrashLoop(t *testing.T) {
	n := kills(t)
	r := &rig{t: t, bin: build(t), rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 14))}
	tmp := t.TempDir()
	r.env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(tmp, "cache"), "HMO_DIR="+filepath.Join(tmp, "nostore"))
	var results []outcome
	results = append(results, r.importLoop(filepath.Join(tmp, "import"), n))
	results = append(results, r.cliAddLoop(filepath.Join(tmp, "add"), n))
	results = append(results, r.daemonLoop(filepath.Join(tmp, "daemon"), n))
	t.Logf("%-12s %6s %7s %5s %11s %11s %8s", "path", "kills", "writes", "lost", "duplicated", "unopenable", "retries")
	for _, o := range results {
		t.Logf("%-12s %6d %7d %5d %11d %11d %8d", o.path, o.kills, o.writes, o.lost, o.duplicated, o.unopenable, o.retries)
		if o.lost > 0 || o.duplicated > 0 || o.unopenable > 0 {
			t.Errorf("%s: %d acknowledged writes lost, %d duplicated after retries, %d times unopenable", o.path, o.lost, o.duplicated, o.unopenable)
		}
	}
}

// importLoop: hmo import of a 300-record file killed at a random moment,
// then re-run until it succeeds.
func (r *rig) importLoop(dir string, n int) outcome {
	o := outcome{path: "import"}
	if out, err := r.cmd("init", "--dir", dir).CombinedOutput(); err != nil {
		r.t.Fatalf("init: %v %s", err, out)
	}
	var acked []string
	for i := 0; o.kills < n; i++ {
		var b strings.Builder
		var texts []string
		for j := range 300 {
			text := fmt.Sprintf("import %d line %d: the buoy %d logs swell height", i, j, r.rng.IntN(1e6))
			texts = append(texts, text)
			fmt.Fprintf(&b, `{"text":%q,"session":"imp-%d"}`+"\n", text, i)
		}
		file := filepath.Join(filepath.Dir(dir), fmt.Sprintf("import-%d.jsonl", i))
		os.WriteFile(file, []byte(b.String()), 0o600)
		killed, _ := r.runKilled(600*time.Millisecond, "import", "--dir", dir, file)
		if killed {
			o.kills++
			if !r.opens(dir) {
				o.unopenable++
			}
		}
		for try := 0; ; try++ {
			out, err := r.cmd("import", "--dir", dir, file).CombinedOutput()
			if err == nil {
				break
			}
			o.retries++
			if try == 20 {
				r.t.Fatalf("import retry keeps failing: %v %s", err, out)
			}
		}
		acked = append(acked, texts...)
		os.Remove(file)
	}
	o.tally(r.texts(dir), acked)
	return o
}

// cliAddLoop: hmo add (no daemon) killed at a random moment, retried
// until it exits 0.
func (r *rig) cliAddLoop(dir string, n int) outcome {
	o := outcome{path: "cli add"}
	if out, err := r.cmd("init", "--dir", dir).CombinedOutput(); err != nil {
		r.t.Fatalf("init: %v %s", err, out)
	}
	var acked []string
	for i := 0; o.kills < n; i++ {
		text := fmt.Sprintf("cli add %d: the tide table for pier %d", i, r.rng.IntN(1e6))
		killed, err := r.runKilled(400*time.Millisecond, "add", "--dir", dir, text)
		if killed {
			o.kills++
			if !r.opens(dir) {
				o.unopenable++
			}
		}
		if killed || err != nil {
			for try := 0; ; try++ {
				out, err := r.cmd("add", "--dir", dir, text).CombinedOutput()
				if err == nil {
					break
				}
				o.retries++
				if try == 20 {
					r.t.Fatalf("add retry keeps failing: %v %s", err, out)
				}
			}
		}
		acked = append(acked, text)
	}
	o.tally(r.texts(dir), acked)
	return o
}

// daemonLoop: a daemon serving HTTP adds is SIGKILLed while a client
// adds; the add in flight is retried on the next daemon.
func (r *rig) daemonLoop(dir string, n int) outcome {
	o := outcome{path: "daemon add"}
	if out, err := r.cmd("init", "--dir", dir).CombinedOutput(); err != nil {
		r.t.Fatalf("init: %v %s", err, out)
	}
	var acked []string
	pending := ""
	for i := 0; o.kills < n; i++ {
		d := r.cmd("serve", "--dir", dir)
		if err := d.Start(); err != nil {
			r.t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { d.Wait(); close(exited) }()
		hc, base, tok := r.connect(dir, d.Process.Pid)
		if hc == nil {
			d.Process.Kill()
			<-exited
			o.unopenable++
			continue
		}
		deadline := time.Now().Add(time.Duration(50+r.rng.IntN(300)) * time.Millisecond)
		go func() {
			time.Sleep(time.Until(deadline))
			d.Process.Kill()
		}()
		for j := 0; ; j++ {
			text := pending
			if text == "" {
				text = fmt.Sprintf("daemon add %d.%d: harbour light %d", i, j, r.rng.IntN(1e6))
			}
			pending = text // in flight until acknowledged
			body, _ := json.Marshal(map[string]any{"memories": []map[string]string{{"text": text}}})
			req, _ := http.NewRequest("POST", base+"/v1/add", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := hc.Do(req)
			if err != nil {
				break // killed: retried on the next daemon
			}
			resp.Body.Close()
			if resp.StatusCode == 200 {
				acked = append(acked, text)
				pending = ""
			} else {
				o.retries++
			}
		}
		<-exited
		o.kills++
		if pending != "" {
			o.retries++
		}
	}
	if !r.opens(dir) {
		o.unopenable++
	}
	o.tally(r.texts(dir), acked)
	return o
}

// connect waits for the daemon pid to publish serve.json and answer.
func (r *rig) connect(dir string, pid int) (*http.Client, string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		info, err := server.ReadInfo(dir)
		tok, terr := server.ReadToken(dir)
		if err == nil && terr == nil && info.PID == pid && info.Addr != "" {
			hc := &http.Client{Timeout: 5 * time.Second}
			base := "http://" + info.Addr
			if resp, err := hc.Get(base + "/v1/health"); err == nil {
				resp.Body.Close()
				return hc, base, tok
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, "", ""
}
