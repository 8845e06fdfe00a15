package ui_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/teststore"
	"github.com/hmo-dev/hmo/ui"
)

// The daemon mounts the browser under /ui/ (server.Options.UI); the CLI
// asks for a login code and the browser trades it for a session cookie.
func Example() {
	dir, _ := os.MkdirTemp("", "hmo-ui-example")
	defer os.RemoveAll(dir)
	e, err := engine.Open(dir, teststore.Options())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	h, err := ui.New(api.NewLocal(e), &ui.Options{Persona: ui.EnginePersona(e)})
	if err != nil {
		fmt.Println(err)
		return
	}
	code, _, _ := h.LoginCode()

	for range 2 {
		req := httptest.NewRequest("GET", "/ui/login?code="+code, nil)
		req.Host = "127.0.0.1:8080"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Println(rec.Code, http.StatusText(rec.Code), rec.Header().Get("Location"))
	}
	// Output:
	// 303 See Other /ui/
	// 403 Forbidden
}
