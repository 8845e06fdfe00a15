package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/server"
)

// TestInvalidUTF8Refused is finding 7 of issue 14: /v1/add stored
// invalid UTF-8 and a lone \ud800 escape as U+FFFD; the CLI refuses
// them. Every such body is now refused with 400 and nothing is stored.
func TestInvalidUTF8Refused(t *testing.T) {
	s, _ := newServer(t, nil)
	h, tok := s.Handler(), s.Token()
	for _, body := range []string{
		`{"memories":[{"text":"pin \ud800"}]}`,
		`{"memories":[{"text":"low \udc00 alone"}]}`,
		"{\"memories\":[{\"text\":\"bad \xff byte\"}]}",
		`{"memories":[{"text":"ok","scope":"\ud800"}]}`,
		`{"memories":[{"text":"ok","sources":["\udbff"]}]}`,
	} {
		code, out := call(t, h, tok, "POST", "/v1/add", body)
		if code != 400 || out["code"] != "invalid" || !strings.Contains(fmt.Sprint(out["error"]), "UTF-8") {
			t.Errorf("%q: %d %v, want 400 invalid naming UTF-8", body, code, out)
		}
	}
	// A valid surrogate pair is fine.
	if code, out := call(t, h, tok, "POST", "/v1/add", `{"memories":[{"text":"smile \ud83d\ude00"}]}`); code != 200 {
		t.Fatalf("valid pair: %d %v", code, out)
	}
	if _, out := call(t, h, tok, "GET", "/v1/stats", ""); out["records"] != 1.0 {
		t.Fatalf("records %v, want only the valid one", out["records"])
	}
}

// TestSlowClientLosesConnection is finding 10: a partial request body
// held a connection for 75 s or more, with or without a token.
func TestSlowClientLosesConnection(t *testing.T) {
	s, _ := newServer(t, &server.Options{ReadTimeout: 300 * time.Millisecond, NoSocket: true})
	info, err := s.Start()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, req string }{
		{"partial body", "POST /v1/add HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + s.Token() + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"memories\":"},
		{"partial headers", "POST /v1/add HTTP/1.1\r\nHost: x\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", info.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, tc.req); err != nil {
				t.Fatal(err)
			}
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			start := time.Now()
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				_, err = c.Read(make([]byte, 1))
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("connection still open after %s", time.Since(start))
			}
			t.Logf("%s: closed after %s (%v)", tc.name, time.Since(start).Round(time.Millisecond), err)
		})
	}
}
