package server_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/server"
)

// failingStats is a service whose Stats fails with an internal error; the
// rest is never called.
type failingStats struct{ api.Service }

func (failingStats) Stats(context.Context) (api.StatsResponse, error) {
	return api.StatsResponse{}, errors.New("disk on fire")
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLog checks the daemon's log: requests at Debug, a refused token at
// Warn, a server error at Error, start and stop at Info.
func TestLog(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := server.New(failingStats{}, &server.Options{Dir: t.TempDir(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(); err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	call(t, h, "", "GET", "/v1/health", "")
	call(t, h, "wrong", "POST", "/v1/search", `{"query":"x"}`)
	if code, _ := call(t, h, s.Token(), "GET", "/v1/stats", ""); code != http.StatusInternalServerError {
		t.Fatalf("stats of a failing service: %d, want 500", code)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"level=INFO msg=serving pid=",
		"level=DEBUG msg=request method=GET path=/v1/health status=200",
		"level=WARN msg=request method=POST path=/v1/search status=401",
		"level=ERROR msg=request method=GET path=/v1/stats status=500",
		"level=INFO msg=stopped",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, s.Token()) {
		t.Error("the log holds the token")
	}
}
