package ollama_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/localllm/ollama"
)

// fakeOllama speaks the parts of Ollama's API hmo uses. Each route answers
// with the handler set for it; requests are counted per path.
type fakeOllama struct {
	mu     sync.Mutex
	routes map[string]http.HandlerFunc
	hits   map[string]int
}

func newFake(t *testing.T) (*fakeOllama, *httptest.Server) {
	f := &fakeOllama{routes: map[string]http.HandlerFunc{}, hits: map[string]int{}}
	f.routes["/api/version"] = jsonAnswer(`{"version":"0.17.4"}`)
	f.routes["/api/tags"] = jsonAnswer(`{"models":[{"name":"tiny:latest","model":"tiny:latest"},{"name":"nomic-embed-text:latest"}]}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.hits[r.URL.Path]++
		h := f.routes[r.URL.Path]
		f.mu.Unlock()
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeOllama) set(path string, h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routes[path] = h
}

func (f *fakeOllama) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[path]
}

func jsonAnswer(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}
}

func status(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

// chatAnswer answers /api/chat with content as the assistant's message.
func chatAnswer(content string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(map[string]any{"model": "tiny", "message": map[string]string{"role": "assistant", "content": content}, "done": true})
		w.Write(b)
	}
}

// embedAnswer answers /api/embed with a vector of dims per input.
func embedAnswer(dims int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		out := make([][]float32, len(req.Input))
		for i := range out {
			out[i] = make([]float32, dims)
			out[i][i%dims] = 3
		}
		json.NewEncoder(w).Encode(map[string]any{"model": "e", "embeddings": out})
	}
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClient(t *testing.T, url string, o ollama.Options) *ollama.Ollama {
	t.Helper()
	o.Host = url
	if o.Sleep == nil {
		o.Sleep = func(context.Context, time.Duration) error { return nil }
	}
	c, err := ollama.New(&o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func TestParseHost(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "http://127.0.0.1:11434"},
		{"127.0.0.1", "http://127.0.0.1:11434"},
		{"localhost:8080", "http://localhost:8080"},
		{"http://[::1]:9000/", "http://[::1]:9000"},
	}
	for _, tc := range cases {
		u, err := ollama.ParseHost(tc.in)
		if err != nil || u.String() != tc.want {
			t.Errorf("ParseHost(%q) = %v, %v; want %s", tc.in, u, err, tc.want)
		}
	}
	if _, err := ollama.ParseHost("ftp://x"); !errors.Is(err, ollama.ErrOptions) {
		t.Errorf("ParseHost(ftp://x) = %v, want ErrOptions", err)
	}
}

func TestHealthAndModels(t *testing.T) {
	_, srv := newFake(t)
	c := newClient(t, srv.URL, ollama.Options{})
	v, err := c.Version(context.Background())
	if err != nil || v != "0.17.4" {
		t.Fatalf("Version = %q, %v; want 0.17.4", v, err)
	}
	for model, want := range map[string]bool{"tiny": true, "tiny:latest": true, "nomic-embed-text": true, "qwen2.5:3b": false} {
		if got, err := c.HasModel(context.Background(), model); err != nil || got != want {
			t.Errorf("HasModel(%q) = %v, %v; want %v", model, got, err, want)
		}
	}
}

func TestEmbedderBatchesAndNormalises(t *testing.T) {
	f, srv := newFake(t)
	f.set("/api/embed", embedAnswer(8))
	c := newClient(t, srv.URL, ollama.Options{})
	e, err := ollama.NewEmbedder(context.Background(), c, "nomic-embed-text", 0)
	if err != nil {
		t.Fatalf("NewEmbedder: %v", err)
	}
	if e.Dims() != 8 || e.Name() != "ollama:nomic-embed-text" {
		t.Fatalf("embedder %s with %d dims, want ollama:nomic-embed-text with 8", e.Name(), e.Dims())
	}
	texts := make([]string, ollama.DefaultEmbedBatch+5)
	for i := range texts {
		texts[i] = fmt.Sprint("text ", i)
	}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if len(vecs) != len(texts) || vecs[3][3] != 1 {
		t.Errorf("got %d vectors, vecs[3][3] = %v; want %d unit vectors", len(vecs), vecs[3][3], len(texts))
	}
	if got := f.count("/api/embed"); got != 3 { // probe + 2 batches
		t.Errorf("/api/embed hits = %d, want 3 (probe and two batches)", got)
	}
}

func TestFailuresMapToSentinels(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    error
		reason  string
		hits    int // retries: 1 + Retries for what may succeed on retry
	}{
		{"model not found", status(404, `{"error":"model \"tiny\" not found, try pulling it first"}`), engine.ErrModelNotFound, "model not found", 1},
		{"server error", status(500, `{"error":"llama runner process has terminated"}`), engine.ErrModelUnavailable, "unavailable", 3},
		{"malformed JSON", jsonAnswer(`{"embeddings": [[1, 2`), engine.ErrModelOutput, "invalid output", 1},
		{"wrong count", jsonAnswer(`{"embeddings": []}`), engine.ErrModelOutput, "invalid output", 1},
		{"NaN-free zero vector", jsonAnswer(`{"embeddings": [[0, 0]]}`), engine.ErrModelOutput, "invalid output", 1},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		}, context.DeadlineExceeded, "timeout", 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := newFake(t)
			f.set("/api/embed", tc.handler)
			c := newClient(t, srv.URL, ollama.Options{CallTimeout: 50 * time.Millisecond, BreakerFailures: 100})
			e, err := ollama.NewEmbedder(context.Background(), c, "tiny", 2)
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(context.Background(), []string{"hello"})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Embed error = %v, want %v", err, tc.want)
			}
			if got := engine.FallbackReason(err); got != tc.reason {
				t.Errorf("reason = %q, want %q", got, tc.reason)
			}
			if got := f.count("/api/embed"); got != tc.hits {
				t.Errorf("requests = %d, want %d", got, tc.hits)
			}
		})
	}
}

func TestUnreachableServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := newClient(t, url, ollama.Options{})
	_, err := c.Version(context.Background())
	if !errors.Is(err, engine.ErrModelUnavailable) {
		t.Fatalf("Version on a closed port = %v, want ErrModelUnavailable", err)
	}
}

func TestBreakerOpensAndCloses(t *testing.T) {
	f, srv := newFake(t)
	var fail atomic.Bool
	fail.Store(true)
	f.set("/api/version", func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			status(503, `{"error":"busy"}`)(w, r)
			return
		}
		jsonAnswer(`{"version":"0.17.4"}`)(w, r)
	})
	clock := &testClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newClient(t, srv.URL, ollama.Options{Retries: -1, BreakerFailures: 3, BreakerCooldown: time.Minute, Clock: clock.Now})
	ctx := context.Background()
	for range 3 {
		c.Version(ctx)
	}
	if !c.Breaker().Open {
		t.Fatalf("breaker closed after 3 failures, want open")
	}
	before := f.count("/api/version")
	if _, err := c.Version(ctx); !errors.Is(err, engine.ErrModelUnavailable) || !strings.Contains(err.Error(), "breaker open") {
		t.Errorf("call with the breaker open = %v, want a breaker refusal", err)
	}
	if f.count("/api/version") != before {
		t.Errorf("an open breaker let a request through")
	}
	fail.Store(false)
	clock.Add(61 * time.Second)
	if _, err := c.Version(ctx); err != nil {
		t.Fatalf("trial call after the cooldown: %v", err)
	}
	if st := c.Breaker(); st.Open || st.Failures != 0 {
		t.Errorf("breaker after a good trial call = %+v, want closed", st)
	}
}

func TestImportanceValidatesAndClamps(t *testing.T) {
	cases := []struct {
		answer string
		want   float64
		err    error
	}{
		{`{"score": 8}`, 8, nil},
		{`  {"score": 0.4}  `, 1, nil},
		{"```json\n{\"score\": 6.6}\n```", 7, nil},
		{`{"score": 73}`, 0, engine.ErrModelOutput},
		{`{"score": -1}`, 0, engine.ErrModelOutput},
		{`{}`, 0, engine.ErrModelOutput},
		{`{"score": "high"}`, 0, engine.ErrModelOutput},
		{`{"score": 5, "why": "x"}`, 0, engine.ErrModelOutput},
		{`Score: 9`, 0, engine.ErrModelOutput},
		{`{"score": 5} {"score": 6}`, 0, engine.ErrModelOutput},
		{`{"score": 5`, 0, engine.ErrModelOutput},
	}
	for _, tc := range cases {
		f, srv := newFake(t)
		f.set("/api/chat", chatAnswer(tc.answer))
		s, err := ollama.NewSteps(newClient(t, srv.URL, ollama.Options{}), &ollama.StepsOptions{Model: "tiny"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Importance(context.Background(), "I am allergic to shellfish", "")
		if !errors.Is(err, tc.err) || (tc.err == nil && got != tc.want) {
			t.Errorf("answer %q: got %v, %v; want %v, %v", tc.answer, got, err, tc.want, tc.err)
		}
	}
}

func TestCompressValidates(t *testing.T) {
	text := strings.Repeat("The build uses Go 1.26 and ships one static binary. ", 10)
	cases := []struct {
		answer string
		kind   string
		err    error
	}{
		{`{"kind":"semantic","summary":"Go 1.26 build, one static binary."}`, engine.SummarySemantic, nil},
		{`{"kind":"Episodic","summary":"They built it."}`, engine.SummaryEpisodic, nil},
		{`{"kind":"poem","summary":"x"}`, "", engine.ErrModelOutput},
		{`{"kind":"core","summary":"   "}`, "", engine.ErrModelOutput},
		{fmt.Sprintf(`{"kind":"core","summary":%q}`, text+" more"), "", engine.ErrModelOutput},
		{`not json at all`, "", engine.ErrModelOutput},
	}
	for _, tc := range cases {
		f, srv := newFake(t)
		f.set("/api/chat", chatAnswer(tc.answer))
		s, _ := ollama.NewSteps(newClient(t, srv.URL, ollama.Options{}), &ollama.StepsOptions{Model: "tiny"})
		got, err := s.Compress(context.Background(), text)
		if !errors.Is(err, tc.err) || got.Kind != tc.kind {
			t.Errorf("answer %q: got %+v, %v; want kind %q, %v", tc.answer, got, err, tc.kind, tc.err)
		}
	}
}

func TestProfileStep(t *testing.T) {
	f, srv := newFake(t)
	f.set("/api/chat", chatAnswer(`{"profile":"Maya is a vegetarian who runs marathons."}`))
	s, _ := ollama.NewSteps(newClient(t, srv.URL, ollama.Options{}), &ollama.StepsOptions{Model: "tiny"})
	got, err := s.Profile(context.Background(), "Salient terms: vegetarian, marathon\n")
	if err != nil || got != "Maya is a vegetarian who runs marathons." {
		t.Errorf("Profile = %q, %v", got, err)
	}
	f.set("/api/chat", status(404, `{"error":"model 'tiny' not found"}`))
	if _, err := s.Profile(context.Background(), "Salient terms: tea\n"); !errors.Is(err, engine.ErrModelNotFound) {
		t.Errorf("Profile with a missing model = %v, want ErrModelNotFound", err)
	}
}

// fixedSufficiency records that it was asked and answers v.
type fixedSufficiency struct {
	v     bool
	asked atomic.Int32
}

func (f *fixedSufficiency) Sufficient(context.Context, *engine.Query, uint8, []engine.Result) (bool, error) {
	f.asked.Add(1)
	return f.v, nil
}

func TestReflectiveTriggerTokenAndFallback(t *testing.T) {
	res := []engine.Result{{Record: engine.Record{Role: "user", Text: "My cat is called Miso."}}}
	q := &engine.Query{Text: "what is my cat called", K: 1}
	cases := []struct {
		answer   string
		want     bool
		fallback bool
	}{
		{`{"decision":"[ANSWER]"}`, true, false},
		{`{"decision":"[RETRIEVE]"}`, false, false},
		{`{"decision":"maybe"}`, true, true},
		{`garbage`, true, true},
	}
	for _, tc := range cases {
		f, srv := newFake(t)
		f.set("/api/chat", chatAnswer(tc.answer))
		fb := &fixedSufficiency{v: true}
		r, err := ollama.NewReflective(newClient(t, srv.URL, ollama.Options{}), &ollama.ReflectiveOptions{Model: "tiny", Fallback: fb})
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Sufficient(context.Background(), q, 1, res)
		if err != nil || got != tc.want || (fb.asked.Load() == 1) != tc.fallback {
			t.Errorf("answer %q: got %v, %v, fallback asked %d; want %v, fallback %v", tc.answer, got, err, fb.asked.Load(), tc.want, tc.fallback)
		}
		st := r.StepStats()[0]
		if st.Calls != 1 || (st.Fallbacks == 1) != tc.fallback {
			t.Errorf("answer %q: stats %+v", tc.answer, st)
		}
	}
}
