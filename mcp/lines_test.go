package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/internal/teststore"
	"github.com/hmo-dev/hmo/mcp"
)

// stdio runs the MCP server on pipes, as hmo mcp runs it on stdin and
// stdout, and returns a line writer and a response reader.
func stdio(t *testing.T, svc api.Service) (send func(string), recv func() map[string]any, done chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := mcp.NewServer(svc, &mcp.Options{Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	done = make(chan error, 1)
	go func() {
		done <- srv.Run(ctx, &mcp.StdioTransport{In: inR, Out: outW, MaxLineBytes: 1 << 20})
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close(); cancel() })
	br := bufio.NewReaderSize(outR, 1<<20)
	lines := make(chan string, 16)
	go func() {
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- l
		}
	}()
	send = func(s string) {
		go func() { io.WriteString(inW, s+"\n") }()
	}
	recv = func() map[string]any {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the session ended")
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("reply %q: %v", l, err)
			}
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no reply")
			return nil
		}
	}
	return send, recv, done
}

// TestMalformedLines is finding 8 of issue 14: one malformed JSON-RPC
// line ended the MCP session (exit 1, no reply). Each now gets a
// JSON-RPC error and the session goes on; invalid UTF-8 in memory_add
// (finding 7) is refused, not stored as U+FFFD.
func TestMalformedLines(t *testing.T) {
	svc := api.NewLocal(teststore.Open(t))
	send, recv, _ := stdio(t, svc)
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r := recv(); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	addLine := func(id int, text string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_add","arguments":{"text":"%s"}}}`, id, text)
	}
	bad := []struct {
		name, line string
		code       float64
	}{
		{"plain text", "hello there", -32700},
		{"truncated", `{"jsonrpc":"2.0","id":5,"method":`, -32700},
		{"batch", `[{"jsonrpc":"2.0","id":6,"method":"ping"}]`, -32600},
		{"empty batch", `[]`, -32600},
		{"wrong version", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, -32600},
		{"no version", `{"id":8,"method":"ping"}`, -32600},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600},
		{"1e400 id", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, -32600},
		{"float id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600},
		{"number method", `{"jsonrpc":"2.0","id":9,"method":42}`, -32600},
		{"string params", `{"jsonrpc":"2.0","id":10,"method":"ping","params":"x"}`, -32600},
		{"deep nesting", `{"jsonrpc":"2.0","id":11,"method":"ping","params":{"a":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}}`, -32600},
		{"bad UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"ping\",\"x\":\"\xff\"}", -32700},
		{"lone surrogate in memory_add", addLine(13, `pin \ud800`), -32700},
		{"bad UTF-8 in memory_add", addLine(14, "pin \xfe"), -32700},
		{"line over the cap", `{"jsonrpc":"2.0","id":15,"method":"ping","params":{"x":"` + strings.Repeat("a", 2<<20) + `"}}`, -32600},
		{"neither request nor response", `{"jsonrpc":"2.0","id":16}`, -32600},
	}
	for i, b := range bad {
		send(b.line)
		r := recv()
		e, _ := r["error"].(map[string]any)
		if e == nil || e["code"] != b.code {
			t.Errorf("%s: reply %v, want error %v", b.name, r, b.code)
		}
		// The session goes on.
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 100+i))
		if r := recv(); r["result"] == nil || r["id"] != float64(100+i) {
			t.Fatalf("after %s: ping got %v", b.name, r)
		}
	}
	send(addLine(200, `valid \ud83d\ude00`))
	if r := recv(); r["result"] == nil {
		t.Fatalf("valid memory_add: %v", r)
	}
	st, err := svc.Stats(context.Background())
	if err != nil || st.Records != 1 {
		t.Fatalf("records %d (%v), want only the valid memory", st.Records, err)
	}
}

// TestCheckBodies: on streamable HTTP, memory_add with a lone surrogate
// or invalid UTF-8 is refused before the SDK decodes it (as U+FFFD).
func TestCheckBodies(t *testing.T) {
	reached := 0
	h := mcp.CheckBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ }), 1<<10)
	for _, tc := range []struct {
		body   string
		status int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_add","arguments":{"text":"pin \ud800"}}}`, 400},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"memory_add\",\"arguments\":{\"text\":\"\xff\"}}}", 400},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 2<<10) + `"}}`, 400},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 200},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/", strings.NewReader(tc.body)))
		if rec.Code != tc.status {
			t.Errorf("%.60q: HTTP %d %s, want %d", tc.body, rec.Code, rec.Body, tc.status)
		}
		if tc.status == 400 && !strings.Contains(rec.Body.String(), `"jsonrpc":"2.0"`) {
			t.Errorf("%.60q: reply %s is not a JSON-RPC error", tc.body, rec.Body)
		}
	}
	if reached != 1 {
		t.Errorf("the SDK handler was reached %d times, want only for the valid body", reached)
	}
}
