package server

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/hmo-dev/hmo/api"
)

// OpenAPI is the OpenAPI 3 description of the HTTP API.
//
//go:embed openapi.json
var OpenAPI []byte

// routes builds the API's handler: the operations behind the token, the
// description and the health check without.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(OpenAPI)
	})
	mux.HandleFunc("GET /v1/health", func(w http.ResponseWriter, r *http.Request) {
		if nonce := r.Header.Get(ChallengeHeader); nonce != "" && len(nonce) <= 128 {
			// Prove to the client that this daemon holds the token,
			// before it sends the token.
			w.Header().Set(ProofHeader, Proof(s.token, nonce, localAddr(r)))
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "pid": s.pid})
	})
	svc := s.svc
	handle(s, mux, "POST /v1/search", svc.Search)
	handle(s, mux, "POST /v1/get", svc.Get)
	handleRequest(s, mux, "POST /v1/add", withIdempotencyKey, svc.Add)
	handle(s, mux, "POST /v1/update", svc.Update)
	handle(s, mux, "POST /v1/delete", svc.Delete)
	handle(s, mux, "POST /v1/list", svc.List)
	handle(s, mux, "POST /v1/context", svc.Context)
	mux.Handle("GET /v1/stats", s.authorized(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := svc.Stats(r.Context())
		reply(w, resp, err)
	})))
	if ps, ok := svc.(api.PersonaSource); ok {
		mux.Handle("GET /v1/persona", s.authorized(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			resp, err := ps.Persona(r.Context())
			reply(w, resp, err)
		})))
	}
	mux.Handle("POST /v1/ui/login", s.authorized(http.HandlerFunc(s.uiLogin)))
	if s.opts.UI != nil {
		mux.Handle("/ui/", s.opts.UI)
		mux.Handle("/ui", http.RedirectHandler("/ui/", http.StatusSeeOther))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, &api.Error{Code: api.CodeNotFound, Message: "no such endpoint: " + r.Method + " " + r.URL.Path})
	})
	return s.track(mux)
}

// handle serves one POST operation: decode the request strictly, call op,
// encode the response.
func handle[Req, Resp any](s *Server, mux *http.ServeMux, pattern string, op func(context.Context, Req) (Resp, error)) {
	handleRequest(s, mux, pattern, nil, op)
}

// handleRequest is handle with a step that completes the decoded request
// from the HTTP request (headers), if not nil.
func handleRequest[Req, Resp any](s *Server, mux *http.ServeMux, pattern string, fill func(*http.Request, *Req) error, op func(context.Context, Req) (Resp, error)) {
	mux.Handle(pattern, s.authorized(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req Req
		err := api.DecodeJSON(w, r, s.opts.MaxBodyBytes, &req)
		if err == nil && fill != nil {
			err = fill(r, &req)
		}
		if err != nil {
			reply[Resp](w, *new(Resp), err)
			return
		}
		resp, err := op(r.Context(), req)
		reply(w, resp, err)
	})))
}

// IdempotencyKeyHeader may carry AddRequest.IdempotencyKey.
const IdempotencyKeyHeader = "Idempotency-Key"

// withIdempotencyKey takes the key from the header; one given in both the
// header and the body must agree.
func withIdempotencyKey(r *http.Request, req *api.AddRequest) error {
	h := r.Header.Get(IdempotencyKeyHeader)
	switch {
	case h == "":
	case req.IdempotencyKey == "":
		req.IdempotencyKey = h
	case req.IdempotencyKey != h:
		return fmt.Errorf("%w: %s header and idempotency_key differ", api.ErrInvalid, IdempotencyKeyHeader)
	}
	return nil
}

// authorized requires the bearer token.
func (s *Server) authorized(h http.Handler) http.Handler {
	want := []byte("Bearer " + s.token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="hmo"`)
			writeError(w, http.StatusUnauthorized, &api.Error{Code: api.CodeUnauthorized, Message: "hmo: missing or wrong bearer token (see the token file in the store directory)"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// UILogin is the answer of POST /v1/ui/login: a one-time link into the
// memory browser.
type UILogin struct {
	URL     string    `json:"url"`     // http://127.0.0.1:port/ui/login?code=…
	Expires time.Time `json:"expires"` // the code is refused after this
}

// uiLogin issues a one-time login link for the memory browser.
func (s *Server) uiLogin(w http.ResponseWriter, _ *http.Request) {
	if s.opts.UI == nil {
		writeError(w, http.StatusNotFound, &api.Error{Code: api.CodeNotFound, Message: "hmo: this daemon serves no memory browser"})
		return
	}
	addr := s.Addr()
	if addr == "" {
		writeError(w, http.StatusServiceUnavailable, &api.Error{Code: api.CodeUnavailable, Message: "hmo: the daemon has no TCP listener for a browser (it was started with --addr -)"})
		return
	}
	code, exp, err := s.opts.UI.LoginCode()
	if err != nil {
		reply(w, UILogin{}, err)
		return
	}
	u := url.URL{Scheme: "http", Host: addr, Path: "/ui/login", RawQuery: url.Values{"code": {code}}.Encode()}
	writeJSON(w, http.StatusOK, UILogin{URL: u.String(), Expires: exp.UTC()})
}

func reply[Resp any](w http.ResponseWriter, resp Resp, err error) {
	if err != nil {
		code := api.Code(err)
		writeError(w, api.HTTPStatus(code), &api.Error{Code: code, Message: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func writeError(w http.ResponseWriter, status int, e *api.Error) { writeJSON(w, status, e) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// localAddr is the address the request came in on, as the client dialled
// it: "unix" for the socket, else host:port.
func localAddr(r *http.Request) string {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || a.Network() == "unix" {
		return "unix"
	}
	return a.String()
}
