package ui_test

import (
	"net/http"
	"strings"
	"testing"
)

var ops = []string{"list", "search", "get", "update", "delete", "stats", "persona"}

// FuzzPageAPI sends arbitrary bodies to the page's API: every answer is a
// JSON error or a 200, never a panic or a 5xx.
func FuzzPageAPI(f *testing.F) {
	for _, s := range []string{`{}`, `{"ids":[1]}`, `{"id":1,"text":"x"}`, `{"query":"bike","k":3}`, `{"limit":-1}`,
		`{"cursor":"bA"}`, `{"ids":[1e99]}`, `[`, `{"text":"\ud800"}`, ``} {
		for op := range ops {
			f.Add(uint8(op), s)
		}
	}
	fx := newFixture(f)
	c, csrf := fx.login(f)
	f.Fuzz(func(t *testing.T, op uint8, body string) {
		path := ops[int(op)%len(ops)]
		rec := fx.api(path, body, c, csrf)
		switch {
		case rec.Code >= 500:
			t.Fatalf("%s %q: %d %s", path, body, rec.Code, rec.Body)
		case rec.Code != http.StatusOK && !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json"):
			t.Fatalf("%s %q: %d with %q", path, body, rec.Code, rec.Header().Get("Content-Type"))
		}
	})
}
