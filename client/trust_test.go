package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/client"
	"github.com/hmo-dev/hmo/server"
)

// spy is a planted server: it answers health checks like a daemon and
// records everything it is sent.
type spy struct {
	mu   sync.Mutex
	seen []string // method path, authorization
	addr string
}

func newSpy(t *testing.T) *spy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &spy{addr: l.Addr().String()}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.URL.Path+" auth="+r.Header.Get("Authorization"))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/health":
			json.NewEncoder(w).Encode(map[string]any{"ok": true, "pid": 1})
		default:
			json.NewEncoder(w).Encode(map[string]any{"ids": []int{1}, "records": 42})
		}
	})}
	go hs.Serve(l)
	t.Cleanup(func() { hs.Close() })
	return s
}

// leaked reports requests that carried a token or a query.
func (s *spy) leaked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.seen {
		if !strings.HasSuffix(r, "auth=") || !strings.HasPrefix(r, "GET /v1/health") {
			out = append(out, r)
		}
	}
	return out
}

// plant writes serve.json (pointing at addr) and a token into dir.
func plant(t *testing.T, dir, addr string) {
	t.Helper()
	info, _ := json.Marshal(server.Info{PID: 1, Addr: addr})
	if err := os.WriteFile(filepath.Join(dir, server.InfoFile), info, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, server.TokenFile), []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestUntrustedStoreDir is finding 4 of issue 14: a store directory
// another user can write (0777) let that user plant serve.json and a
// token, and the CLI sent its memories to the planted server.
func TestUntrustedStoreDir(t *testing.T) {
	s := newSpy(t)
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{"dir writable by others", func(t *testing.T, dir string) { os.Chmod(dir, 0o777) }},
		{"dir writable by group", func(t *testing.T, dir string) { os.Chmod(dir, 0o770) }},
		{"token readable by others", func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, server.TokenFile), 0o644) }},
		{"serve.json writable by others", func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, server.InfoFile), 0o666) }},
		{"dir owned by another user", func(t *testing.T, dir string) {
			if os.Getuid() != 0 {
				t.Skip("LOUD SKIP: changing a directory's owner needs root")
			}
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			os.Mkdir(dir, 0o700)
			plant(t, dir, s.addr)
			tc.setup(t, dir)
			c, err := client.New(&client.Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Add(context.Background(), api.AddRequest{Memories: []api.NewMemory{{Text: "my bank pin is 4321"}}})
			if err == nil {
				t.Fatal("Add through a planted daemon succeeded")
			}
			if !errors.Is(err, server.ErrUntrusted) && !errors.Is(err, client.ErrNoDaemon) {
				t.Errorf("got %v", err)
			}
			if l := s.leaked(); len(l) > 0 {
				t.Fatalf("sent to the planted server: %v", l)
			}
			if strings.HasPrefix(tc.name, "serve.json") {
				return // the daemon replaces serve.json; it never reads it
			}
			if _, err := server.New(nil, &server.Options{Dir: dir}); !errors.Is(err, server.ErrUntrusted) {
				t.Errorf("server.New in an untrusted dir: %v, want ErrUntrusted", err)
			}
		})
	}
}

// TestPortSquatter is finding 5: with no socket and a killed daemon, a
// local user bound the old port from the stale serve.json and received
// the bearer token and the query. The client now sends neither before
// the daemon proves it holds the token.
func TestPortSquatter(t *testing.T) {
	s := newSpy(t)
	dir := t.TempDir()
	plant(t, dir, s.addr) // the real token, a stale serve.json, the port taken
	c, err := client.New(&client.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Search(context.Background(), api.SearchRequest{Query: "bank pin"})
	if !errors.Is(err, client.ErrNoDaemon) {
		t.Errorf("got %v, want ErrNoDaemon", err)
	}
	if _, perr := c.Connect(context.Background()); !errors.Is(perr, client.ErrImpostor) {
		t.Errorf("Connect: %v, want ErrImpostor", perr)
	}
	if l := s.leaked(); len(l) > 0 {
		t.Fatalf("sent to the squatter: %v", l)
	}
}

// TestLongStorePathGetsSocket: a store path too long for a Unix socket
// got no socket at all (TCP only, finding 5); it now gets one under
// $XDG_RUNTIME_DIR, and the client uses it.
func TestLongStorePathGetsSocket(t *testing.T) {
	runtime := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	dir := filepath.Join(t.TempDir(), strings.Repeat("long-directory-name-", 6))
	if len(filepath.Join(dir, server.SocketFile)) <= 108 {
		t.Fatal("test path not long enough")
	}
	serve(t, dir)
	info, err := server.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Socket == "" || !strings.HasPrefix(info.Socket, runtime+"/") {
		t.Fatalf("socket %q, want one under %s", info.Socket, runtime)
	}
	c, err := client.New(&client.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Add(context.Background(), api.AddRequest{Memories: []api.NewMemory{{Text: "through the runtime-dir socket"}}}); err != nil {
		t.Fatal(err)
	}
}

// TestRelativeDir is finding 6: a daemon started with a relative --dir
// wrote a relative socket path; clients from another working directory
// could not reach it.
func TestRelativeDir(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	serve(t, "store")
	info, err := server.ReadInfo("store")
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(info.Socket) || !filepath.IsAbs(info.Dir) {
		t.Fatalf("serve.json %+v: want absolute paths", info)
	}
	t.Chdir(t.TempDir()) // another working directory
	c, err := client.New(&client.Options{Dir: filepath.Join(root, "store")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pid, err := c.Connect(ctx)
	if err != nil || pid != os.Getpid() {
		t.Fatalf("Connect from another directory: %d, %v", pid, err)
	}
}
