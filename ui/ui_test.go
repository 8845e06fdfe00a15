package ui_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/internal/teststore"
	"github.com/hmo-dev/hmo/ui"
)

// host is the Host of the requests in these tests: the daemon's loopback
// address.
const host = "127.0.0.1:8123"

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type fixture struct {
	h     *ui.Handler
	svc   *api.Local
	clock *clock
	ids   []uint64
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	svc := api.NewLocal(teststore.Open(t))
	c := &clock{now: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	h, err := ui.New(svc, &ui.Options{Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	add, err := svc.Add(context.Background(), api.AddRequest{Memories: []api.NewMemory{
		{Text: "my bike is a red Gazelle", Scope: "me", Session: "s1", Role: "user"},
		{Text: `<script>alert("x")</script> & friends`, Scope: "me", Session: "s1", Role: "user"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{h: h, svc: svc, clock: c, ids: add.IDs}
}

// req is one request to the handler.
type req struct {
	method, path, body string
	header             map[string]string
	cookie             *http.Cookie
	host               string
}

func (f *fixture) do(r req) *httptest.ResponseRecorder {
	hr := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body))
	hr.Host = host
	if r.host != "" {
		hr.Host = r.host
	}
	if r.body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.header {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	if r.cookie != nil {
		hr.AddCookie(r.cookie)
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, hr)
	return rec
}

// login signs in with a fresh code and returns the cookie and the CSRF
// token.
func (f *fixture) login(t testing.TB) (*http.Cookie, string) {
	t.Helper()
	code, _, err := f.h.LoginCode()
	if err != nil {
		t.Fatal(err)
	}
	rec := f.do(req{method: "GET", path: "/ui/login?code=" + code})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/ui/" {
		t.Fatalf("login: %d %q, want 303 to /ui/", rec.Code, rec.Header().Get("Location"))
	}
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 {
		t.Fatalf("login set %d cookies, want 1", len(cookies))
	}
	c := cookies[0]
	rec = f.do(req{method: "GET", path: "/ui/api/session", cookie: c})
	var s struct{ CSRF string }
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &s) != nil || s.CSRF == "" {
		t.Fatalf("session: %d %s", rec.Code, rec.Body)
	}
	return c, s.CSRF
}

// api calls the page's API as the page does.
func (f *fixture) api(path, body string, c *http.Cookie, csrf string) *httptest.ResponseRecorder {
	return f.do(req{method: "POST", path: "/ui/api/" + path, body: body, cookie: c,
		header: map[string]string{ui.CSRFHeader: csrf, "Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}})
}

func TestLoginCodeSingleUseShortLived(t *testing.T) {
	f := newFixture(t)
	code, exp, err := f.h.LoginCode()
	if err != nil || !exp.Equal(f.clock.Now().Add(ui.DefaultCodeTTL)) {
		t.Fatalf("LoginCode: %v, expires %v", err, exp)
	}
	rec := f.do(req{method: "GET", path: "/ui/login?code=" + code})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("first use: %d, want 303", rec.Code)
	}
	c := rec.Result().Cookies()[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/ui/" || c.Name != "hmo_ui_8123" || len(c.Value) < 40 {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path /ui/, named after the port, a long secret", c)
	}
	if strings.Contains(rec.Header().Get("Set-Cookie"), code) {
		t.Error("the session id is the login code")
	}

	late, _, _ := f.h.LoginCode()
	f.clock.Add(ui.DefaultCodeTTL)
	for name, q := range map[string]string{
		"reused": "?code=" + code, "expired": "?code=" + late, "unknown": "?code=AAAA", "empty": "?code=", "none": "",
	} {
		rec := f.do(req{method: "GET", path: "/ui/login" + q})
		if rec.Code != http.StatusForbidden || len(rec.Result().Cookies()) != 0 || !strings.Contains(rec.Body.String(), "hmo ui") {
			t.Errorf("%s code: %d, cookies %v; want 403 with advice and no cookie", name, rec.Code, rec.Result().Cookies())
		}
	}
	// The expired code was used up too: it does not come back.
	f.clock.Add(-ui.DefaultCodeTTL)
	if rec := f.do(req{method: "GET", path: "/ui/login?code=" + late}); rec.Code != http.StatusForbidden {
		t.Errorf("an expired code worked after the clock went back: %d", rec.Code)
	}
}

func TestNeedsSession(t *testing.T) {
	f := newFixture(t)
	good, _ := f.login(t)
	expired, csrf := f.login(t)
	f.clock.Add(ui.DefaultSessionTTL - time.Second)
	live := f.do(req{method: "GET", path: "/ui/", cookie: good}).Code
	f.clock.Add(time.Second)
	if live != 200 {
		t.Fatalf("live session: %d", live)
	}
	for name, c := range map[string]*http.Cookie{
		"no cookie":     nil,
		"bogus cookie":  {Name: good.Name, Value: "bogus"},
		"expired":       expired,
		"other port":    {Name: "hmo_ui_9999", Value: good.Value},
		"empty session": {Name: good.Name, Value: ""},
	} {
		if rec := f.do(req{method: "GET", path: "/ui/", cookie: c}); rec.Code != 401 || !strings.Contains(rec.Body.String(), "hmo ui") {
			t.Errorf("%s: GET /ui/ = %d, want 401 with sign-in advice", name, rec.Code)
		}
		if rec := f.do(req{method: "GET", path: "/ui/api/session", cookie: c}); rec.Code != 401 || !strings.Contains(rec.Body.String(), `"unauthorized"`) {
			t.Errorf("%s: GET /ui/api/session = %d %s, want 401 unauthorized", name, rec.Code, rec.Body)
		}
		if rec := f.api("list", `{}`, c, csrf); rec.Code != 401 {
			t.Errorf("%s: list = %d, want 401", name, rec.Code)
		}
	}
}

func TestCSRFAndOriginRefused(t *testing.T) {
	f := newFixture(t)
	c, csrf := f.login(t)
	other, otherCSRF := f.login(t)
	_ = other
	body := `{"ids":[1]}`
	// A token that differs from the real one in its first character,
	// whatever that character is.
	wrong := "x" + csrf[1:]
	if csrf[0] == 'x' {
		wrong = "y" + csrf[1:]
	}
	for _, tc := range []struct {
		name   string
		header map[string]string
		status int
	}{
		{"no CSRF header", map[string]string{ui.CSRFHeader: ""}, 403},
		{"wrong CSRF token", map[string]string{ui.CSRFHeader: wrong}, 403},
		{"another session's token", map[string]string{ui.CSRFHeader: otherCSRF}, 403},
		{"no Origin", map[string]string{"Origin": ""}, 403},
		{"another port", map[string]string{"Origin": "http://127.0.0.1:9999"}, 403},
		{"another host", map[string]string{"Origin": "http://evil.example"}, 403},
		{"null origin", map[string]string{"Origin": "null"}, 403},
		{"same-site, other origin", map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"cross-site", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"form post", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 400},
		{"text/plain", map[string]string{"Content-Type": "text/plain"}, 400},
	} {
		h := map[string]string{ui.CSRFHeader: csrf, "Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}
		for k, v := range tc.header {
			h[k] = v
		}
		rec := f.do(req{method: "POST", path: "/ui/api/delete", body: body, cookie: c, header: h})
		if rec.Code != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, rec.Code, rec.Body, tc.status)
		}
	}
	if got, _ := f.svc.Get(context.Background(), api.GetRequest{IDs: []uint64{1}}); len(got.Memories) != 1 {
		t.Fatal("a refused request deleted record 1")
	}
	if rec := f.api("delete", body, c, csrf); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"deleted":1`) {
		t.Fatalf("same-origin delete with the token: %d %s", rec.Code, rec.Body)
	}
	if got, _ := f.svc.Get(context.Background(), api.GetRequest{IDs: []uint64{1}}); len(got.Missing) != 1 {
		t.Fatal("record 1 still there after delete")
	}
}

func TestRefusesOtherHosts(t *testing.T) {
	f := newFixture(t)
	code, _, _ := f.h.LoginCode()
	for _, h := range []string{"evil.example:8123", "hmo", "192.168.1.2:8123", "127.0.0.1.evil.example"} {
		for _, p := range []string{"/ui/login?code=" + code, "/ui/", "/ui/static/app.js"} {
			if rec := f.do(req{method: "GET", path: p, host: h}); rec.Code != http.StatusMisdirectedRequest {
				t.Errorf("Host %s %s: %d, want 421", h, p, rec.Code)
			}
		}
	}
	for _, h := range []string{"localhost:8123", "[::1]:8123", "127.0.0.1:8123"} {
		if rec := f.do(req{method: "GET", path: "/ui/login?code=" + code, host: h}); rec.Code != http.StatusSeeOther {
			t.Errorf("Host %s: %d, want 303 (and the code unused by the refusals above)", h, rec.Code)
		}
		code, _, _ = f.h.LoginCode()
	}
}

func TestHeadersAndAssets(t *testing.T) {
	f := newFixture(t)
	c, _ := f.login(t)
	for _, tc := range []struct {
		path   string
		status int
		ctype  string
	}{
		{"/ui/", 200, "text/html; charset=utf-8"},
		{"/ui/static/app.js", 200, "text/javascript; charset=utf-8"},
		{"/ui/static/style.css", 200, "text/css; charset=utf-8"},
		{"/ui/static/icon.svg", 200, "image/svg+xml"},
		{"/ui/static/index.html", 404, ""},
		{"/ui/static/..%2fui.go", 404, ""},
		{"/ui/static/nope.js", 404, ""},
		{"/ui/nope", 404, ""},
		{"/ui/api/nope", 404, "application/json"},
		{"/ui/login?code=x", 403, "text/html; charset=utf-8"},
	} {
		rec := f.do(req{method: "GET", path: tc.path, cookie: c})
		hd := rec.Header()
		if rec.Code != tc.status || (tc.ctype != "" && hd.Get("Content-Type") != tc.ctype) {
			t.Errorf("%s: %d %q, want %d %q", tc.path, rec.Code, hd.Get("Content-Type"), tc.status, tc.ctype)
		}
		csp := hd.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", tc.path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") || strings.Contains(csp, "http") {
			t.Errorf("%s: CSP %q allows inline code or other hosts", tc.path, csp)
		}
		if hd.Get("X-Content-Type-Options") != "nosniff" || hd.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", tc.path, hd)
		}
	}
	// The page loads nothing from elsewhere and no inline script.
	for _, name := range []string{"/ui/", "/ui/static/app.js", "/ui/static/style.css"} {
		body := f.do(req{method: "GET", path: name, cookie: c}).Body.String()
		for _, bad := range []string{"http://", "https://", "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("} {
			if strings.Contains(body, bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
	}
}

func TestPageAPI(t *testing.T) {
	f := newFixture(t)
	c, csrf := f.login(t)
	steps := []struct {
		path, body string
		status     int
		want       []string
	}{
		{"list", `{"reverse":true,"scope":"me"}`, 200, []string{`"text":"my bike is a red Gazelle"`, `\u003cscript\u003e`}},
		{"list", `{"scope":"nobody"}`, 200, []string{`"memories":[]`}},
		{"search", `{"query":"bike"}`, 200, []string{`"score":`, `"tier":`, "Gazelle"}},
		{"update", `{"id":1,"text":"my bike is a blue Cortina"}`, 200, []string{`"id":3`, `"supersedes":1`}},
		{"get", `{"ids":[3],"history":true}`, 200, []string{"blue Cortina", `"history":[{"id":1`, `"superseded_by":3`}},
		{"update", `{"id":1,"text":"again"}`, 409, []string{`"conflict"`}},
		{"update", `{"id":3,"text":""}`, 400, []string{`"invalid"`}},
		{"get", `{"ids":[]}`, 400, []string{`"invalid"`}},
		{"list", `{"bogus":1}`, 400, []string{`unknown field`}},
		{"list", `{} {}`, 400, []string{`data after`}},
		{"list", ``, 400, []string{`"invalid"`}},
		{"stats", `{}`, 200, []string{`"records":2`, `"tiers":{"queries":`}},
		{"persona", `{}`, 200, []string{`"enabled":false`}},
		{"delete", `{"ids":[3]}`, 200, []string{`"deleted":1`}},
		{"get", `{"ids":[3,1]}`, 200, []string{`"missing":[3,1]`}},
	}
	for _, st := range steps {
		rec := f.api(st.path, st.body, c, csrf)
		for _, w := range st.want {
			if rec.Code != st.status || !strings.Contains(rec.Body.String(), w) {
				t.Errorf("%s %s: %d %s; want %d with %s", st.path, st.body, rec.Code, rec.Body, st.status, w)
			}
		}
	}
	big := `{"id":2,"text":"` + strings.Repeat("a", ui.DefaultMaxBodyBytes) + `"}`
	if rec := f.api("update", big, c, csrf); rec.Code != 413 {
		t.Errorf("body over the limit: %d, want 413", rec.Code)
	}
}

func TestPersonaPage(t *testing.T) {
	svc := api.NewLocal(teststore.Open(t))
	e := svc.Engine()
	h, err := ui.New(svc, &ui.Options{Persona: ui.EnginePersona(e)})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{h: h, svc: svc, clock: &clock{}}
	if _, err := svc.Add(context.Background(), api.AddRequest{Memories: []api.NewMemory{{Text: "I love climbing and bouldering on weekends", Scope: "me"}}}); err != nil {
		t.Fatal(err)
	}
	c, csrf := f.login(t)
	rec := f.api("persona", `{}`, c, csrf)
	var p ui.Persona
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &p) != nil {
		t.Fatalf("persona: %d %s", rec.Code, rec.Body)
	}
	if !p.Enabled || p.Updates != 1 || p.Firings != 1 || len(p.Profile.Terms) == 0 || p.Text == "" || len(p.History) != 1 {
		t.Errorf("persona after one memory: %+v", p)
	}
}

func TestLogoutAndSessionLimit(t *testing.T) {
	f := newFixture(t)
	c, csrf := f.login(t)
	if rec := f.api("logout", `{}`, c, csrf); rec.Code != 200 || !strings.Contains(rec.Header().Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("logout: %d %v", rec.Code, rec.Header())
	}
	if rec := f.api("list", `{}`, c, csrf); rec.Code != 401 {
		t.Errorf("after logout: %d, want 401", rec.Code)
	}
	// Sessions are bounded: the oldest goes first.
	first, _ := f.login(t)
	for range 64 {
		f.clock.Add(time.Millisecond)
		f.login(t)
	}
	if rec := f.do(req{method: "GET", path: "/ui/", cookie: first}); rec.Code != 401 {
		t.Errorf("the oldest of 65 sessions: %d, want 401 (dropped)", rec.Code)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("no entropy") }

func TestBadOptions(t *testing.T) {
	svc := api.NewLocal(teststore.Open(t))
	if _, err := ui.New(nil, nil); err == nil {
		t.Error("New(nil service) succeeded")
	}
	if _, err := ui.New(svc, &ui.Options{CodeTTL: -time.Second}); err == nil {
		t.Error("negative CodeTTL accepted")
	}
	h, err := ui.New(svc, &ui.Options{Rand: failingReader{}})
	if err != nil {
		t.Fatal(err)
	}
	if code, _, err := h.LoginCode(); err == nil || code != "" {
		t.Errorf("LoginCode without entropy: %q, %v; want an error", code, err)
	}
}
