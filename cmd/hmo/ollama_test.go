package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeOllama serves the version, the model list and hashed embeddings.
func fakeOllama(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/api/version", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"version":"0.17.4"}`) })
	mux.HandleFunc("/api/tags", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"models":[{"name":"fake-embed:latest"},{"name":"fake-chat:latest"}]}`)
	})
	mux.HandleFunc("/api/embed", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if req.Model != "fake-embed" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":"model %q not found, try pulling it first"}`, req.Model)
			return
		}
		out := make([][]float32, len(req.Input))
		for i, s := range req.Input {
			out[i] = make([]float32, 16)
			for _, w := range strings.Fields(strings.ToLower(s)) {
				h := 0
				for _, c := range w {
					h = h*31 + int(c)
				}
				out[i][(h%16+16)%16]++
			}
			out[i][0] += 0.01
		}
		json.NewEncoder(w).Encode(map[string]any{"embeddings": out})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestReindexToOllamaAndBack(t *testing.T) {
	dir := newStore(t)
	host := fakeOllama(t)
	if r := hmoRun(t, "", "reindex", "--dir", dir); r.code != 2 {
		t.Errorf("reindex without --embedder: %v; want exit 2", r)
	}
	if r := hmoRun(t, "", "reindex", "--dir", dir, "--ollama-host", host, "--embedder", "ollama:missing"); r.code != 1 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("reindex to a missing model: %v; want exit 1 naming the missing model", r)
	}
	out := mustRun(t, "", "reindex", "--dir", dir, "--ollama-host", host, "--embedder", "ollama:fake-embed")
	if !strings.Contains(out, "to ollama:fake-embed (16 dims)") {
		t.Errorf("reindex output: %s", out)
	}
	stats := mustRun(t, "", "stats", "--dir", dir, "--ollama-host", host)
	if !strings.Contains(stats, "embedder:   ollama:fake-embed (16 dims") || !strings.Contains(stats, "34 in 3 session(s)") {
		t.Errorf("stats after reindex:\n%s", stats)
	}
	if out := mustRun(t, "", "recall", "--dir", dir, "--ollama-host", host, "name of the cat"); !strings.Contains(strings.ToLower(out), "cat") {
		t.Errorf("recall with the Ollama embedder:\n%s", out)
	}
	mustRun(t, "", "reindex", "--dir", dir, "--embedder", "static")
	if stats := mustRun(t, "", "stats", "--dir", dir); !strings.Contains(stats, "embedder:   static:") {
		t.Errorf("stats after reindexing back:\n%s", stats)
	}
}

func TestDoctorOneLinePerFailure(t *testing.T) {
	dir := newStore(t)
	host := fakeOllama(t)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"healthy", []string{"--dir", dir, "--ollama-host", host, "--chat-model", "fake-chat"}, 0, "ok    ollama: chat model fake-chat present"},
		{"no store", []string{"--dir", t.TempDir() + "/none"}, 1, "FAIL  store: no store in"},
		{"missing chat model", []string{"--dir", dir, "--ollama-host", host, "--chat-model", "qwen2.5:3b"}, 1,
			"FAIL  ollama: chat model qwen2.5:3b not found — run 'ollama pull qwen2.5:3b'"},
		{"server down", []string{"--dir", dir, "--ollama-host", "127.0.0.1:1", "--chat-model", "fake-chat"}, 1,
			"FAIL  ollama: not reachable at http://127.0.0.1:1 — start it with 'ollama serve' or set OLLAMA_HOST"},
		{"server down, not needed", []string{"--dir", dir, "--ollama-host", "127.0.0.1:1"}, 0, "note  ollama: not reachable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := hmoRun(t, "", append([]string{"doctor"}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stdout, tc.want) {
				t.Errorf("got %v\nwant exit %d and a line %q", r, tc.code, tc.want)
			}
		})
	}
}

// TestDoctorJSON checks doctor --json: the same findings as the text, each
// with its status and check, and exit 1 when one fails.
func TestDoctorJSON(t *testing.T) {
	dir := newStore(t)
	host := fakeOllama(t)
	r := hmoRun(t, "", "doctor", "--json", "--dir", dir, "--ollama-host", host, "--chat-model", "qwen2.5:3b")
	var rep struct {
		Problems int `json:"problems"`
		Findings []struct{ Status, Check, Message string }
	}
	decode(t, r.stdout, &rep)
	text := hmoRun(t, "", "doctor", "--dir", dir, "--ollama-host", host, "--chat-model", "qwen2.5:3b")
	if r.code != 1 || rep.Problems != 1 || len(rep.Findings) != strings.Count(text.stdout, "\n") {
		t.Fatalf("doctor --json: %v\nwant exit 1, one problem, one finding per line of\n%s", r, text.stdout)
	}
	var failed []string
	for _, f := range rep.Findings {
		if f.Status == "fail" {
			failed = append(failed, f.Check+": "+f.Message)
		}
	}
	if len(failed) != 1 || !strings.HasPrefix(failed[0], "ollama: chat model qwen2.5:3b not found") {
		t.Errorf("doctor --json failures %q", failed)
	}
}
