package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

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
	handle(s, mux, "POST /v1/add", svc.Add)
	handle(s, mux, "POST /v1/update", svc.Update)
	handle(s, mux, "POST /v1/delete", svc.Delete)
	handle(s, mux, "POST /v1/list", svc.List)
	handle(s, mux, "POST /v1/context", svc.Context)
	mux.Handle("GET /v1/stats", s.authorized(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := svc.Stats(r.Context())
		reply(w, resp, err)
	})))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, &api.Error{Code: api.CodeNotFound, Message: "no such endpoint: " + r.Method + " " + r.URL.Path})
	})
	return s.track(mux)
}

// handle serves one POST operation: decode the request strictly, call op,
// encode the response.
func handle[Req, Resp any](s *Server, mux *http.ServeMux, pattern string, op func(context.Context, Req) (Resp, error)) {
	mux.Handle(pattern, s.authorized(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := decode(w, r, s.opts.MaxBodyBytes, &req); err != nil {
			reply[Resp](w, *new(Resp), err)
			return
		}
		resp, err := op(r.Context(), req)
		reply(w, resp, err)
	})))
}

// decode reads one JSON object from the body, refusing unknown fields,
// trailing data and bodies over limit bytes.
func decode(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("%w: content type %q, want application/json", api.ErrInvalid, ct)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fmt.Errorf("%w: body over %d bytes", api.ErrTooLarge, limit)
	}
	if err != nil {
		return fmt.Errorf("%w: reading the body: %v", api.ErrInvalid, err)
	}
	// encoding/json would turn invalid UTF-8 and lone surrogates into
	// U+FFFD: refuse them as the CLI does.
	if err := api.CheckRawJSON(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil && dec.Decode(new(json.RawMessage)) != io.EOF {
		err = errors.New("data after the JSON object")
	}
	switch {
	case err == nil:
		return nil
	case errors.As(err, &mbe):
		return fmt.Errorf("%w: body over %d bytes", api.ErrTooLarge, limit)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w: empty body", api.ErrInvalid)
	}
	return fmt.Errorf("%w: %v", api.ErrInvalid, err)
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

func reply[Resp any](w http.ResponseWriter, resp Resp, err error) {
	if err != nil {
		code := api.Code(err)
		writeError(w, statusOf(code), &api.Error{Code: code, Message: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func statusOf(code string) int {
	switch code {
	case api.CodeInvalid:
		return http.StatusBadRequest
	case api.CodeNotFound:
		return http.StatusNotFound
	case api.CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case api.CodeConflict:
		return http.StatusConflict
	case api.CodeUnauthorized:
		return http.StatusUnauthorized
	case api.CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
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
