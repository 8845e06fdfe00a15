package ui

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hmo-dev/hmo/api"
)

// CSRFHeader carries the session's CSRF token on every API call.
const CSRFHeader = "X-HMO-CSRF"

// secretBytes is the entropy of codes, session ids and CSRF tokens.
const secretBytes = 32

// auth keeps the login codes and the sessions, by the SHA-256 of their
// secret (a memory dump shows no usable secret). It is safe for
// concurrent use.
type auth struct {
	opts *Options

	mu       sync.Mutex // guards the maps
	codes    map[[32]byte]time.Time
	sessions map[[32]byte]*session
}

// session is one signed-in browser.
type session struct {
	expires time.Time
	csrf    string
}

func newAuth(o *Options) *auth {
	return &auth{opts: o, codes: map[[32]byte]time.Time{}, sessions: map[[32]byte]*session{}}
}

func (a *auth) secret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := io.ReadFull(a.opts.Rand, b); err != nil {
		return "", fmt.Errorf("ui: random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// newCode issues a login code.
func (a *auth) newCode() (string, time.Time, error) {
	code, err := a.secret()
	if err != nil {
		return "", time.Time{}, err
	}
	now := a.opts.Clock()
	exp := now.Add(a.opts.CodeTTL)
	a.mu.Lock()
	defer a.mu.Unlock()
	prune(a.codes, now, maxCodes, func(t time.Time) time.Time { return t })
	a.codes[sha256.Sum256([]byte(code))] = exp
	return code, exp, nil
}

// redeem uses up a code: it is valid once, before it expires.
func (a *auth) redeem(code string) bool {
	if code == "" {
		return false
	}
	k := sha256.Sum256([]byte(code))
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.codes[k]
	delete(a.codes, k)
	return ok && a.opts.Clock().Before(exp)
}

// newSession starts a session and returns its id.
func (a *auth) newSession() (string, *session, error) {
	id, err := a.secret()
	if err != nil {
		return "", nil, err
	}
	csrf, err := a.secret()
	if err != nil {
		return "", nil, err
	}
	now := a.opts.Clock()
	s := &session{expires: now.Add(a.opts.SessionTTL), csrf: csrf}
	a.mu.Lock()
	defer a.mu.Unlock()
	prune(a.sessions, now, maxSessions, func(s *session) time.Time { return s.expires })
	a.sessions[sha256.Sum256([]byte(id))] = s
	return id, s, nil
}

// session returns the request's live session.
func (a *auth) session(r *http.Request) (*session, bool) {
	c, err := r.Cookie(cookieName(r))
	if err != nil || c.Value == "" {
		return nil, false
	}
	k := sha256.Sum256([]byte(c.Value))
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[k]
	if ok && !a.opts.Clock().Before(s.expires) {
		delete(a.sessions, k)
		return nil, false
	}
	return s, ok
}

// end ends the request's session.
func (a *auth) end(r *http.Request) {
	if c, err := r.Cookie(cookieName(r)); err == nil {
		a.mu.Lock()
		delete(a.sessions, sha256.Sum256([]byte(c.Value)))
		a.mu.Unlock()
	}
}

// prune drops expired entries and, while m is full, the one that expires
// first, so that m has room for one more.
func prune[V any](m map[[32]byte]V, now time.Time, limit int, expiry func(V) time.Time) {
	for k, v := range m {
		if !now.Before(expiry(v)) {
			delete(m, k)
		}
	}
	for len(m) >= limit {
		var first [32]byte
		var at time.Time
		for k, v := range m {
			if e := expiry(v); at.IsZero() || e.Before(at) {
				first, at = k, e
			}
		}
		delete(m, first)
	}
}

// cookieName names the session cookie after the port: cookies do not
// separate ports, and daemons of two stores must not overwrite each
// other's session.
func cookieName(r *http.Request) string {
	if _, port, err := net.SplitHostPort(r.Host); err == nil && port != "" {
		return "hmo_ui_" + port
	}
	return "hmo_ui"
}

// loopbackHost accepts a Host header naming this machine's loopback.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin refuses requests a page of another origin sent: Sec-Fetch-Site
// (sent by current browsers) must say same-origin, and Origin, required on
// writes, must be this server's own.
func sameOrigin(r *http.Request) error {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" {
		return fmt.Errorf("hmo: request from another site (Sec-Fetch-Site: %s)", s)
	}
	o := r.Header.Get("Origin")
	if o == "" {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return nil
		}
		return fmt.Errorf("hmo: %s without an Origin header", r.Method)
	}
	if o != "http://"+r.Host {
		return fmt.Errorf("hmo: request from another origin (%s)", o)
	}
	return nil
}

// session wraps an API handler: it needs a live session, a same-origin
// request and, with csrf, the session's token in CSRFHeader.
func (h *Handler) session(csrf bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, ok := h.auth.session(r)
		if !ok {
			writeError(w, &api.Error{Code: api.CodeUnauthorized, Message: "hmo: not signed in: run 'hmo ui' for a login link"})
			return
		}
		if err := sameOrigin(r); err != nil {
			writeForbidden(w, err.Error())
			return
		}
		if csrf && subtle.ConstantTimeCompare([]byte(r.Header.Get(CSRFHeader)), []byte(s.csrf)) != 1 {
			writeForbidden(w, "hmo: missing or wrong "+CSRFHeader+" header")
			return
		}
		next.ServeHTTP(w, r.WithContext(withSession(r.Context(), s)))
	})
}

// login trades a login code for a session cookie and sends the browser to
// the page.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if !h.auth.redeem(r.URL.Query().Get("code")) {
		servePage(w, "static/badcode.html", http.StatusForbidden)
		return
	}
	id, s, err := h.auth.newSession()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(r), Value: id, Path: "/ui/",
		Expires: s.expires, MaxAge: int(h.opts.SessionTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// sessionInfo gives the page its CSRF token. Only a page of this origin
// can read it.
func (h *Handler) sessionInfo(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r.Context())
	writeJSON(w, http.StatusOK, map[string]any{"csrf": s.csrf, "expires": s.expires.UTC()})
}

// logout ends the session and drops the cookie.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	h.auth.end(r)
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: "", Path: "/ui/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}
