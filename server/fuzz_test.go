package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/internal/teststore"
	"github.com/hmo-dev/hmo/server"
)

// endpoints the fuzzer picks from.
var fuzzRoutes = []string{
	"POST /v1/add", "POST /v1/search", "POST /v1/get", "POST /v1/update", "POST /v1/delete",
	"POST /v1/list", "POST /v1/context", "GET /v1/stats", "GET /v1/health", "POST /v1/nowhere",
}

// FuzzHandlers sends arbitrary bodies (and tokens, content types) to
// every endpoint of one store: no panic, no 5xx, and a JSON reply.
func FuzzHandlers(f *testing.F) {
	s, err := server.New(api.NewLocal(teststore.Open(f)), &server.Options{Dir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	h, tok := s.Handler(), s.Token()
	for i, body := range []string{
		`{"memories":[{"text":"the red bike","scope":"me"}]}`, `{"query":"bike","k":3}`, `{"ids":[1,2]}`,
		`{"id":1,"text":"blue"}`, `{"ids":[1]}`, `{"limit":1,"reverse":true}`, `{"prompt":"bike"}`, ``, `{}`,
		`{"memories":[{"text":"\ud800"}]}`, `{"query":"x","cursor":"AAAA"}`, `[1,2]`, `{"ids":[-1]}`, `{"k":1e400}`,
	} {
		f.Add(uint8(i), body, true, "application/json")
	}
	f.Fuzz(func(t *testing.T, route uint8, body string, auth bool, ctype string) {
		method, path, _ := strings.Cut(fuzzRoutes[int(route)%len(fuzzRoutes)], " ")
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if auth {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		req.Header.Set("Content-Type", ctype)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: HTTP %d %s", method, path, body, rec.Code, rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") && rec.Code != http.StatusOK {
			t.Fatalf("%s %s: content type %q", method, path, ct)
		}
	})
}
