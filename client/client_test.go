package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/client"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/teststore"
	"github.com/hmo-dev/hmo/server"
)

// serve runs a daemon-like server over a store in dir, in this process.
func serve(t *testing.T, dir string) {
	t.Helper()
	if err := startServer(t, dir); err != nil {
		t.Fatal(err)
	}
}

// startServer is serve for any goroutine: it reports instead of failing.
func startServer(t *testing.T, dir string) error {
	e, err := engine.Open(dir, teststore.Options())
	if err != nil {
		return err
	}
	s, err := server.New(api.NewLocal(e), &server.Options{Dir: dir})
	if err == nil {
		_, err = s.Start()
	}
	t.Cleanup(func() {
		if s != nil {
			s.Close()
		}
		e.Close()
	})
	return err
}

func TestClientTalksToDaemon(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	serve(t, dir)
	c, err := client.New(&client.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	add, err := c.Add(ctx, api.AddRequest{Memories: []api.NewMemory{{Text: "the spare key is under the blue pot", Scope: "home"}}})
	if err != nil || len(add.IDs) != 1 {
		t.Fatalf("Add = %+v, %v", add, err)
	}
	sr, err := c.Search(ctx, api.SearchRequest{Query: "spare key", Filter: api.Filter{Scope: "home"}})
	if err != nil || len(sr.Results) != 1 || sr.Results[0].ID != add.IDs[0] {
		t.Errorf("Search = %+v, %v", sr, err)
	}
	_, err = c.Update(ctx, api.UpdateRequest{ID: 999, Text: "x"})
	if !errors.Is(err, engine.ErrNotFound) || api.Code(err) != api.CodeNotFound {
		t.Errorf("Update(unknown) err = %v, want a not_found error matching engine.ErrNotFound", err)
	}
	if st, err := c.Stats(ctx); err != nil || st.Records != 1 {
		t.Errorf("Stats = %+v, %v", st, err)
	}
	var ps api.PersonaSource = c // the MCP server offers memory://persona through it
	if p, err := ps.Persona(ctx); err != nil || (p.Profile == "") != (p.Source == "") {
		t.Errorf("Persona = %+v, %v", p, err)
	}
}

func TestClientFallsBackToLocal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opened := 0
	c, _ := client.New(&client.Options{Dir: dir, OpenLocal: func() (*engine.Engine, error) {
		opened++
		return engine.Open(dir, teststore.Options())
	}})
	if _, err := c.Add(ctx, api.AddRequest{Memories: []api.NewMemory{{Text: "local write"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Persona(ctx); err != nil {
		t.Errorf("Persona via the local store: %v", err)
	}
	// The store is not held between calls: a daemon can take it now.
	serve(t, dir)
	if st, err := c.Stats(ctx); err != nil || st.Records != 1 || opened != 2 {
		t.Errorf("Stats via the daemon = %+v, %v; local opens %d, want 2", st, err, opened)
	}
	none, _ := client.New(&client.Options{Dir: t.TempDir()})
	if _, err := none.Stats(ctx); !errors.Is(err, client.ErrNoDaemon) {
		t.Errorf("no daemon, no fallback: err = %v, want ErrNoDaemon", err)
	}
}

func TestClientStartsDaemonOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	starts := 0
	start := func(context.Context) error {
		starts++
		go func() { // a daemon that takes a moment to come up
			time.Sleep(50 * time.Millisecond)
			if err := startServer(t, dir); err != nil {
				t.Error(err)
			}
		}()
		return nil
	}
	c, _ := client.New(&client.Options{Dir: dir, Start: start, StartTimeout: 5 * time.Second})
	pid, err := c.Connect(ctx)
	if err != nil || pid == 0 {
		t.Fatalf("Connect = %d, %v", pid, err)
	}
	for range 3 {
		if _, err := c.List(ctx, api.ListRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if starts != 1 {
		t.Errorf("daemon started %d times, want 1", starts)
	}
	failing, _ := client.New(&client.Options{Dir: t.TempDir(), Start: func(context.Context) error { return nil }, StartTimeout: 100 * time.Millisecond})
	if _, err := failing.Connect(ctx); !errors.Is(err, client.ErrNoDaemon) {
		t.Errorf("daemon that never answers: err = %v, want ErrNoDaemon", err)
	}
}
