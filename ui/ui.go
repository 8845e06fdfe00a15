package ui

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"path"
	"time"

	"github.com/hmo-dev/hmo/api"
)

// Defaults for Options.
const (
	DefaultCodeTTL      = time.Minute    // a login code is refused after this
	DefaultSessionTTL   = 12 * time.Hour // a browser session ends this long after login
	DefaultMaxBodyBytes = 1 << 20        // 1 MiB: an edited text is at most 64 KiB
	maxCodes            = 16             // login codes outstanding; the oldest goes first
	maxSessions         = 64             // sessions kept; the oldest goes first
)

// Options configure a Handler. A nil *Options means the defaults.
type Options struct {
	// Persona describes the persona for the persona page. Default nil:
	// the page says there is none.
	Persona PersonaFunc
	// CodeTTL is how long a login code stays valid. Default DefaultCodeTTL.
	CodeTTL time.Duration
	// SessionTTL is how long a session lasts after login. Default
	// DefaultSessionTTL.
	SessionTTL time.Duration
	// MaxBodyBytes caps a request body, in bytes. Default
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Clock gives the current time. Default time.Now.
	Clock func() time.Time
	// Rand is the source of codes, session ids and CSRF tokens. Default
	// crypto/rand.Reader.
	Rand io.Reader
}

func (o *Options) withDefaults() (*Options, error) {
	c := Options{}
	if o != nil {
		c = *o
	}
	if c.CodeTTL == 0 {
		c.CodeTTL = DefaultCodeTTL
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
	if c.CodeTTL < 0 || c.SessionTTL < 0 || c.MaxBodyBytes < 0 {
		return nil, errors.New("ui: negative option")
	}
	return &c, nil
}

//go:embed static
var static embed.FS

// Handler serves the memory browser under /ui/. It is safe for concurrent
// use.
type Handler struct {
	svc  api.Service
	opts *Options
	auth *auth
	mux  *http.ServeMux
}

// New returns the browser over svc.
func New(svc api.Service, opts *Options) (*Handler, error) {
	if svc == nil {
		return nil, errors.New("ui: no service")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	h := &Handler{svc: svc, opts: o, auth: newAuth(o)}
	h.mux = h.routes()
	return h, nil
}

// LoginCode issues a single-use login code, valid until the time returned.
func (h *Handler) LoginCode() (string, time.Time, error) { return h.auth.newCode() }

// ServeHTTP serves a request for a path under /ui/.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store")
	if !loopbackHost(r.Host) {
		// A name that resolves to 127.0.0.1 is another site (DNS rebinding).
		http.Error(w, "hmo: the memory browser answers only on 127.0.0.1, [::1] or localhost", http.StatusMisdirectedRequest)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// contentSecurityPolicy allows the page's own script, style and icon, and
// requests to its own origin; nothing inline, nothing from elsewhere.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

func (h *Handler) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ui/login", h.login)
	mux.HandleFunc("GET /ui/static/{file}", serveStatic)
	mux.HandleFunc("GET /ui/{$}", h.index)
	mux.Handle("GET /ui/api/session", h.session(false, http.HandlerFunc(h.sessionInfo)))
	mux.Handle("POST /ui/api/logout", h.session(true, http.HandlerFunc(h.logout)))
	mux.Handle("POST /ui/api/list", h.session(true, op(h, h.svc.List)))
	mux.Handle("POST /ui/api/search", h.session(true, op(h, h.svc.Search)))
	mux.Handle("POST /ui/api/get", h.session(true, op(h, h.svc.Get)))
	mux.Handle("POST /ui/api/update", h.session(true, op(h, h.svc.Update)))
	mux.Handle("POST /ui/api/delete", h.session(true, op(h, h.svc.Delete)))
	mux.Handle("POST /ui/api/stats", h.session(true, op(h, func(ctx context.Context, _ struct{}) (api.StatsResponse, error) {
		return h.svc.Stats(ctx)
	})))
	mux.Handle("POST /ui/api/persona", h.session(true, op(h, h.persona)))
	mux.HandleFunc("/ui/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &api.Error{Code: api.CodeNotFound, Message: "hmo: no such endpoint: " + r.Method + " " + r.URL.Path})
	})
	mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "hmo: no such page", http.StatusNotFound)
	})
	return mux
}

// index serves the page to a signed-in browser and the sign-in help to
// any other.
func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.auth.session(r); !ok {
		servePage(w, "static/signin.html", http.StatusUnauthorized)
		return
	}
	servePage(w, "static/index.html", http.StatusOK)
}

func servePage(w http.ResponseWriter, name string, status int) {
	b, err := static.ReadFile(name)
	if err != nil {
		http.Error(w, "hmo: missing page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

// staticTypes are the asset files served, by extension.
var staticTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".svg": "image/svg+xml",
}

// serveStatic serves the page's script, style and icon.
func serveStatic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	ct, ok := staticTypes[path.Ext(name)]
	if !ok || !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	b, err := static.ReadFile("static/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(b)
}
