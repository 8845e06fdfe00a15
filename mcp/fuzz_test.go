package mcp_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/hmo-dev/hmo/mcp"
)

// FuzzLines feeds arbitrary input to the stdio line filter: every line
// that reaches the SDK decodes as a JSON-RPC message (so the session
// cannot end on it), and every other line gets exactly one error reply.
func FuzzLines(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `hello`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, `{"jsonrpc":"2.0","id":{},"method":"x"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`, `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"\xff\"}", `{"jsonrpc":"2.0","method":"n","params":[` + strings.Repeat("[", 100) + `]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		passed, replies := mcp.FilterForTest(in, 1<<16)
		for _, l := range passed {
			if _, err := jsonrpc.DecodeMessage([]byte(l)); err != nil {
				t.Fatalf("line %q passed the filter but the SDK fails on it: %v", l, err)
			}
		}
		lines := 0
		for _, l := range strings.Split(in, "\n") {
			if strings.TrimSpace(l) != "" {
				lines++
			}
		}
		if len(passed)+len(replies) != lines {
			t.Fatalf("%d lines in, %d passed + %d replies", lines, len(passed), len(replies))
		}
	})
}
