package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/internal/teststore"
	"github.com/hmo-dev/hmo/server"
	"github.com/hmo-dev/hmo/ui"
)

func newServer(t *testing.T, opts *server.Options) (*server.Server, string) {
	t.Helper()
	dir := t.TempDir()
	o := server.Options{Dir: dir}
	if opts != nil {
		o = *opts
		o.Dir = dir
	}
	s, err := server.New(api.NewLocal(teststore.Open(t)), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func call(t *testing.T, h http.Handler, token, method, path, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: body %q is not a JSON object: %v", method, path, rec.Body.String(), err)
	}
	return rec.Code, out
}

func TestEndpoints(t *testing.T) {
	s, _ := newServer(t, nil)
	h, tok := s.Handler(), s.Token()
	steps := []struct {
		method, path, body string
		status             int
		check              func(map[string]any) bool
	}{
		{"POST", "/v1/add", `{"memories":[{"text":"my bike is a red Gazelle","scope":"me"},{"text":"I bake sourdough on Sundays","scope":"me"}]}`, 200,
			func(m map[string]any) bool { return len(m["ids"].([]any)) == 2 }},
		{"POST", "/v1/search", `{"query":"bike","k":1,"min_score":-1}`, 200,
			func(m map[string]any) bool { r := m["results"].([]any); return len(r) == 1 && m["next_cursor"] != nil }},
		{"POST", "/v1/get", `{"ids":[1,99]}`, 200,
			func(m map[string]any) bool { return len(m["memories"].([]any)) == 1 && len(m["missing"].([]any)) == 1 }},
		{"POST", "/v1/update", `{"id":1,"text":"my bike is a blue Cortina"}`, 200,
			func(m map[string]any) bool { return m["id"] == 3.0 && m["supersedes"] == 1.0 }},
		{"POST", "/v1/update", `{"id":1,"text":"again"}`, 409, isCode("conflict")},
		{"POST", "/v1/list", `{"limit":1}`, 200,
			func(m map[string]any) bool { return len(m["memories"].([]any)) == 1 && m["next_cursor"] != nil }},
		{"POST", "/v1/context", `{"prompt":"what bike do I ride","scope":"me"}`, 200,
			func(m map[string]any) bool { return strings.Contains(m["context"].(string), "Cortina") }},
		{"POST", "/v1/delete", `{"ids":[3,42]}`, 200,
			func(m map[string]any) bool { return m["deleted"] == 1.0 && len(m["missing"].([]any)) == 1 }},
		{"GET", "/v1/stats", ``, 200, func(m map[string]any) bool { return m["records"] == 1.0 }},
		{"GET", "/v1/health", ``, 200, func(m map[string]any) bool { return m["ok"] == true }},
		{"GET", "/v1/persona", ``, 200, func(m map[string]any) bool { _, ok := m["profile"].(string); return ok }},
		{"POST", "/v1/search", `{"query":"bike","bogus":1}`, 400, isCode("invalid")},
		{"POST", "/v1/search", `{"query":"bike"} {}`, 400, isCode("invalid")},
		{"POST", "/v1/search", ``, 400, isCode("invalid")},
		{"POST", "/v1/get", `{"ids":[1]}`, 200, func(m map[string]any) bool { return len(m["missing"].([]any)) == 1 }},
		{"POST", "/v1/update", `{"id":77,"text":"x"}`, 404, isCode("not_found")},
		{"GET", "/v1/search", ``, 404, isCode("not_found")},
		{"POST", "/v1/nope", `{}`, 404, isCode("not_found")},
	}
	for _, st := range steps {
		code, body := call(t, h, tok, st.method, st.path, st.body)
		if code != st.status || !st.check(body) {
			t.Errorf("%s %s %s: %d %v; want %d", st.method, st.path, st.body, code, body, st.status)
		}
	}
}

func isCode(c string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["code"] == c && m["error"] != "" }
}

func TestTokenRequiredAndBodyLimited(t *testing.T) {
	s, dir := newServer(t, &server.Options{MaxBodyBytes: 1024})
	h := s.Handler()
	for _, tok := range []string{"", "wrong"} {
		if code, body := call(t, h, tok, "POST", "/v1/search", `{"query":"x"}`); code != 401 || body["code"] != "unauthorized" {
			t.Errorf("token %q: %d %v, want 401 unauthorized", tok, code, body)
		}
	}
	big := `{"memories":[{"text":"` + strings.Repeat("a", 2000) + `"}]}`
	if code, body := call(t, h, s.Token(), "POST", "/v1/add", big); code != 413 || body["code"] != "too_large" {
		t.Errorf("big body: %d %v, want 413 too_large", code, body)
	}
	fi, err := os.Stat(filepath.Join(dir, server.TokenFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	if tok, err := server.LoadOrCreateToken(dir); err != nil || tok != s.Token() {
		t.Errorf("token not kept across starts: %q vs %q (%v)", tok, s.Token(), err)
	}
}

func TestRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":8080", "192.168.1.2:80", "example.com:80"} {
		_, err := server.New(api.NewLocal(teststore.Open(t)), &server.Options{Dir: t.TempDir(), Addr: addr})
		if err == nil {
			t.Errorf("New with addr %q succeeded, want an error", addr)
		}
	}
}

func TestStartListensAndIdlesOut(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s, dir := newServer(t, &server.Options{Idle: time.Minute, Clock: clock, IdleCheck: 5 * time.Millisecond})
	info, err := s.Start()
	if err != nil {
		t.Fatal(err)
	}
	got, err := server.ReadInfo(dir)
	if err != nil || got.PID != os.Getpid() || got.Port == 0 || !strings.HasPrefix(got.Addr, "127.0.0.1:") || got.Socket != info.Socket {
		t.Fatalf("serve.json = %+v, %v", got, err)
	}
	for _, f := range []string{server.InfoFile, server.SocketFile} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want mode 0600", f, err)
		}
	}
	// Both listeners answer.
	for _, c := range []*http.Client{
		{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", info.Socket)
		}}},
		http.DefaultClient,
	} {
		req, _ := http.NewRequest("POST", "http://"+info.Addr+"/v1/add", bytes.NewReader([]byte(`{"memories":[{"text":"hello"}]}`)))
		req.Header.Set("Authorization", "Bearer "+s.Token())
		resp, err := c.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("add over listener: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	select {
	case <-s.Done():
		t.Fatal("idled out before the idle time")
	case <-time.After(50 * time.Millisecond):
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("did not idle out")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{server.InfoFile, server.SocketFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after Close: %v", f, err)
		}
	}
}

// TestOpenAPIMatchesTypes checks that the committed description names
// every endpoint and exactly the JSON fields of the wire types.
func TestOpenAPIMatchesTypes(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(server.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/v1/search", "/v1/get", "/v1/add", "/v1/update", "/v1/delete", "/v1/list", "/v1/context", "/v1/stats", "/v1/persona", "/v1/health", "/v1/ui/login"} {
		if doc.Paths[p] == nil {
			t.Errorf("openapi.json lacks %s", p)
		}
	}
	types := map[string]any{
		"Memory": api.Memory{}, "SearchRequest": api.SearchRequest{}, "SearchResponse": api.SearchResponse{},
		"GetRequest": api.GetRequest{}, "GetResponse": api.GetResponse{}, "NewMemory": api.NewMemory{},
		"AddRequest": api.AddRequest{}, "AddResponse": api.AddResponse{}, "UpdateRequest": api.UpdateRequest{},
		"UpdateResponse": api.UpdateResponse{}, "DeleteRequest": api.DeleteRequest{}, "DeleteResponse": api.DeleteResponse{},
		"ListRequest": api.ListRequest{}, "ListResponse": api.ListResponse{}, "ContextRequest": api.ContextRequest{},
		"ContextResponse": api.ContextResponse{}, "StatsResponse": api.StatsResponse{}, "Error": api.Error{}, "UILogin": server.UILogin{},
		"PersonaResponse": api.PersonaResponse{},
	}
	for name, v := range types {
		b, _ := json.Marshal(fill(reflect.ValueOf(&v).Elem().Elem().Type()))
		var fields map[string]any
		json.Unmarshal(b, &fields)
		props := doc.Components.Schemas[name].Properties
		for f := range fields {
			if _, ok := props[f]; !ok {
				t.Errorf("schema %s lacks field %q", name, f)
			}
		}
		for f := range props {
			if _, ok := fields[f]; !ok {
				t.Errorf("schema %s has field %q the Go type lacks", name, f)
			}
		}
	}
}

// fill returns a value of type t with every field non-zero, so that JSON
// shows all of them.
func fill(t reflect.Type) any {
	v := reflect.New(t).Elem()
	for i := range t.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Uint8, reflect.Uint32:
			if f.CanInt() {
				f.SetInt(1)
			} else {
				f.SetUint(1)
			}
		case reflect.Float64:
			f.SetFloat(1)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Struct:
			if f.Type() == reflect.TypeFor[time.Time]() {
				f.Set(reflect.ValueOf(time.Unix(1, 0)))
			} else {
				f.Set(reflect.ValueOf(fill(f.Type())))
			}
		}
	}
	return v.Interface()
}

// TestAddRetryWithIdempotencyKey reproduces issue 14 finding 9: a client
// that saw a reset retries /v1/add; with the key (header or field) the
// retry stores nothing, and a plain re-add of the same text is a
// duplicate, not a second record.
func TestAddRetryWithIdempotencyKey(t *testing.T) {
	s, _ := newServer(t, nil)
	h, tok := s.Handler(), s.Token()
	post := func(body, key string) (int, map[string]any) {
		req := httptest.NewRequest("POST", "/v1/add", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var out map[string]any
		json.Unmarshal(rec.Body.Bytes(), &out)
		return rec.Code, out
	}
	body := `{"memories":[{"text":"note one"},{"text":"note two"}]}`
	c1, r1 := post(body, "k-1")
	c2, r2 := post(body, "k-1")
	if c1 != 200 || c2 != 200 || fmt.Sprint(r1["ids"]) != fmt.Sprint(r2["ids"]) || r2["added"] != 0.0 {
		t.Fatalf("retry: %d %v then %d %v; want the same ids, nothing added", c1, r1, c2, r2)
	}
	if c, r := post(`{"memories":[{"text":"note three"}]}`, "k-1"); c != 409 || r["code"] != "conflict" {
		t.Errorf("key reused for other memories: %d %v, want 409 conflict", c, r)
	}
	if c, r := post(`{"memories":[{"text":"x"}],"idempotency_key":"a"}`, "b"); c != 400 {
		t.Errorf("header and field differ: %d %v, want 400", c, r)
	}
	if c, r := post(`{"memories":[{"text":"Note  one"}]}`, ""); c != 200 || r["note"] != "already stored: id 1" {
		t.Errorf("re-add: %d %v, want already stored: id 1", c, r)
	}
	if _, st := call(t, h, tok, "GET", "/v1/stats", ""); st["records"] != 2.0 {
		t.Errorf("%v records, want 2", st["records"])
	}
}

// TestUILogin checks the memory browser's login links: behind the token,
// only where a browser is mounted and a TCP port listens, and each link's
// code working once.
func TestUILogin(t *testing.T) {
	plain, _ := newServer(t, nil)
	if code, body := call(t, plain.Handler(), plain.Token(), "POST", "/v1/ui/login", ""); code != 404 || body["code"] != "not_found" {
		t.Errorf("no browser mounted: %d %v, want 404", code, body)
	}
	if code, _ := call(t, plain.Handler(), plain.Token(), "GET", "/ui/", ""); code != 404 {
		t.Errorf("GET /ui/ with no browser mounted: %d, want 404", code)
	}
	dir := t.TempDir()
	svc := api.NewLocal(teststore.Open(t))
	browser, err := ui.New(svc, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(svc, &server.Options{Dir: dir, UI: browser, NoSocket: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if code, body := call(t, s.Handler(), s.Token(), "POST", "/v1/ui/login", ""); code != 503 || body["code"] != "unavailable" {
		t.Errorf("before Start (no TCP address): %d %v, want 503", code, body)
	}
	info, err := s.Start()
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"", "wrong"} {
		if code, _ := call(t, s.Handler(), tok, "POST", "/v1/ui/login", ""); code != 401 {
			t.Errorf("token %q: %d, want 401", tok, code)
		}
	}
	code, body := call(t, s.Handler(), s.Token(), "POST", "/v1/ui/login", "")
	link, _ := body["url"].(string)
	if code != 200 || !strings.HasPrefix(link, "http://"+info.Addr+"/ui/login?code=") || body["expires"] == nil {
		t.Fatalf("login link: %d %v", code, body)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i, want := range []int{http.StatusSeeOther, http.StatusForbidden} {
		resp, err := noRedirect.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("use %d of the link: %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	resp, err := noRedirect.Get("http://" + info.Addr + "/ui")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("GET /ui: %d to %q, want 303 to /ui/", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// releasing is a Service that counts the memory releases asked of it.
type releasing struct {
	*api.Local
	n atomic.Int64
}

func (r *releasing) ReleaseMemory() error { r.n.Add(1); return r.Local.ReleaseMemory() }

// TestReleaseWhenIdle: after Release without a request the server asks
// the service to give back its cached memory, once per idle spell, and
// never while requests keep coming.
func TestReleaseWhenIdle(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	svc := &releasing{Local: api.NewLocal(teststore.Open(t))}
	s, err := server.New(svc, &server.Options{Dir: t.TempDir(), Addr: "-", Release: time.Minute, Clock: clock, IdleCheck: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for svc.n.Load() < want && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond) // and no more than that
		if got := svc.n.Load(); got != want {
			t.Fatalf("%d releases, want %d", got, want)
		}
	}
	add := func() {
		if code, _ := call(t, s.Handler(), s.Token(), "POST", "/v1/add", `{"memories":[{"text":"the tide gauge"}]}`); code != 200 {
			t.Fatalf("add: %d", code)
		}
	}
	add()
	advance(30 * time.Second)
	waitFor(0)
	advance(31 * time.Second)
	waitFor(1)
	advance(time.Hour) // still the same idle spell
	waitFor(1)
	add()
	advance(59 * time.Second)
	waitFor(1)
	advance(2 * time.Second)
	waitFor(2)
}
