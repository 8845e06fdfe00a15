package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/hmo-dev/hmo/api"
)

// op serves one API call of the page: decode the request strictly, call
// f, encode the response or the error as the HTTP API does.
func op[Req, Resp any](h *Handler, f func(context.Context, Req) (Resp, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := decode(w, r, h.opts.MaxBodyBytes, &req); err != nil {
			writeError(w, err)
			return
		}
		resp, err := f(r.Context(), req)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, resp)
	})
}

// decode reads one JSON object as the HTTP API does, and insists on the
// JSON content type, which a form or a simple cross-origin request cannot
// send.
func decode(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("%w: content type %q, want application/json", api.ErrInvalid, ct)
	}
	return api.DecodeJSON(w, r, limit, v)
}

func writeError(w http.ResponseWriter, err error) {
	code := api.Code(err)
	writeJSON(w, api.HTTPStatus(code), &api.Error{Code: code, Message: err.Error()})
}

func writeForbidden(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusForbidden, &api.Error{Code: "forbidden", Message: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) // HTML-escaped: < > & arrive as \u003c …
}

type sessionKey struct{}

func withSession(ctx context.Context, s *session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

func sessionOf(ctx context.Context) *session {
	s, _ := ctx.Value(sessionKey{}).(*session)
	return s
}
