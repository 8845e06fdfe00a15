package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/internal/teststore"
	"github.com/hmo-dev/hmo/mcp"
)

func session(t *testing.T) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv := mcp.NewServer(api.NewLocal(teststore.Open(t)), &mcp.Options{Version: "test"})
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args any) (map[string]any, bool, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v (want results or tool errors only)", name, err)
	}
	text := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*sdk.TextContent); ok {
			text = tc.Text
		}
	}
	var out map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
	}
	return out, res.IsError, text
}

func TestToolsDeclareSchemas(t *testing.T) {
	cs := session(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"memory_search": true, "memory_get": true, "memory_add": true, "memory_update": true,
		"memory_delete": true, "memory_list": true, "memory_context": true, "memory_stats": true}
	for _, tool := range res.Tools {
		if !want[tool.Name] {
			t.Errorf("unexpected tool %s", tool.Name)
		}
		delete(want, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("%s: description, input or output schema missing", tool.Name)
		}
	}
	if len(want) != 0 {
		t.Errorf("tools missing: %v", want)
	}
}

func TestToolsRoundTrip(t *testing.T) {
	cs := session(t)
	out, isErr, _ := callTool(t, cs, "memory_add", map[string]any{"text": "the deploy script lives in ops/deploy.sh", "scope": "repo", "time": "2024-05-01"})
	if isErr || len(out["ids"].([]any)) != 1 {
		t.Fatalf("memory_add = %v (error %v)", out, isErr)
	}
	id := out["ids"].([]any)[0]
	out, isErr, text := callTool(t, cs, "memory_search", map[string]any{"query": "deploy script", "scope": "repo", "from": "2024-01-01"})
	if isErr || len(out["results"].([]any)) != 1 || !strings.Contains(text, "ops/deploy.sh") {
		t.Errorf("memory_search = %v, text %q", out, text)
	}
	out, isErr, _ = callTool(t, cs, "memory_update", map[string]any{"id": id, "text": "the deploy script moved to scripts/deploy.sh"})
	if isErr || out["supersedes"] != id {
		t.Errorf("memory_update = %v", out)
	}
	out, isErr, _ = callTool(t, cs, "memory_context", map[string]any{"prompt": "how do I deploy", "scope": "repo"})
	if isErr || !strings.Contains(out["context"].(string), "scripts/deploy.sh") || strings.Contains(out["context"].(string), "ops/deploy.sh") {
		t.Errorf("memory_context = %v", out)
	}
	out, isErr, _ = callTool(t, cs, "memory_list", map[string]any{"reverse": true})
	if isErr || len(out["memories"].([]any)) != 1 {
		t.Errorf("memory_list = %v", out)
	}
	out, isErr, _ = callTool(t, cs, "memory_stats", map[string]any{})
	if isErr || out["records"] != 1.0 {
		t.Errorf("memory_stats = %v", out)
	}
}

func TestBadCallsAreToolErrors(t *testing.T) {
	cs := session(t)
	tests := []struct {
		tool string
		args any
		want string
	}{
		{"memory_search", map[string]any{"query": ""}, "minLength"},
		{"memory_search", map[string]any{"query": "x", "k": 51}, "maximum"},
		{"memory_search", map[string]any{"query": "x", "max_tokens": 0}, "minimum"},
		{"memory_get", map[string]any{"ids": ids(51)}, "maxItems"},
		{"memory_get", map[string]any{"ids": []int{0}}, "minimum"},
		{"memory_search", map[string]any{"query": "x", "from": "yesterday"}, "RFC 3339"},
		{"memory_search", map[string]any{"k": 3}, "query"},
		{"memory_add", map[string]any{"text": 42}, "text"},
		{"memory_update", map[string]any{"id": 77, "text": "x"}, "not found"},
		{"memory_get", map[string]any{"ids": []int{}}, "minItems"},
		{"memory_list", map[string]any{"cursor": "zzz"}, "cursor"},
	}
	for _, tt := range tests {
		_, isErr, text := callTool(t, cs, tt.tool, tt.args)
		if !isErr || !strings.Contains(text, tt.want) {
			t.Errorf("%s(%v): error %v, text %q; want a tool error mentioning %q", tt.tool, tt.args, isErr, text, tt.want)
		}
	}
}

// The limits of package api are constraints of the tool input schemas, with
// plain types a schema-driven client (the MCP Inspector CLI) can fill.
func TestInputSchemasCarryLimits(t *testing.T) {
	cs := session(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]map[string]any{}
	for _, tool := range res.Tools {
		b, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		schemas[tool.Name] = m
	}
	tests := []struct {
		tool, field, key string
		want             any
	}{
		{"memory_search", "k", "minimum", 1.0},
		{"memory_search", "k", "maximum", float64(api.MaxSearchK)},
		{"memory_search", "max_tokens", "minimum", 1.0},
		{"memory_search", "max_tokens", "maximum", float64(api.MaxSearchTokens)},
		{"memory_get", "ids", "type", "array"},
		{"memory_get", "ids", "minItems", 1.0},
		{"memory_get", "ids", "maxItems", float64(api.MaxGetIDs)},
		{"memory_delete", "ids", "type", "array"},
		{"memory_delete", "ids", "maxItems", float64(api.MaxDeleteIDs)},
		{"memory_update", "id", "minimum", 1.0},
		{"memory_list", "limit", "maximum", float64(api.MaxListSize)},
		{"memory_context", "max_tokens", "maximum", float64(api.MaxContextTokens)},
		{"memory_add", "sources", "type", "array"},
		{"memory_add", "memories", "maxItems", float64(api.MaxAddMemories)},
		{"memory_add", "idempotency_key", "maxLength", 200.0},
		{"memory_search", "min_score", "maximum", 1.0},
		{"memory_context", "min_score", "maximum", 1.0},
	}
	for _, tt := range tests {
		props, _ := schemas[tt.tool]["properties"].(map[string]any)
		field, _ := props[tt.field].(map[string]any)
		if got := field[tt.key]; got != tt.want {
			t.Errorf("%s.%s %s = %v, want %v (schema %v)", tt.tool, tt.field, tt.key, got, tt.want, field)
		}
	}
	for _, tool := range []string{"memory_get", "memory_delete"} {
		items := schemas[tool]["properties"].(map[string]any)["ids"].(map[string]any)["items"].(map[string]any)
		if items["minimum"] != 1.0 {
			t.Errorf("%s ids items = %v, want minimum 1", tool, items)
		}
	}
}

func ids(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// TestAddDeduplicatesAndBatches reproduces issue 12: memory_add of the
// same text twice gave two records; 419 turns took 419 calls. Now the
// second add names the stored record, a retry with the same idempotency
// key stores nothing, and memories adds a batch in one call.
func TestAddDeduplicatesAndBatches(t *testing.T) {
	cs := session(t)
	first, isErr, _ := callTool(t, cs, "memory_add", map[string]any{"text": "I am allergic to shellfish.", "scope": "me"})
	if isErr {
		t.Fatalf("memory_add: %v", first)
	}
	again, isErr, _ := callTool(t, cs, "memory_add", map[string]any{"text": "I am  allergic to shellfish.", "scope": "me"})
	id := first["ids"].([]any)[0]
	if isErr || again["ids"].([]any)[0] != id || again["added"] != 0.0 || again["note"] != "already stored: id 1" {
		t.Errorf("second memory_add = %v, want the first id, nothing added, a note", again)
	}
	batch := map[string]any{"idempotency_key": "b-1", "memories": []map[string]any{
		{"text": "We deploy on Fridays.", "scope": "team"}, {"text": "The database is Postgres 16.", "scope": "team"},
		{"text": "I am allergic to shellfish.", "scope": "me"},
	}}
	for try := range 2 {
		out, isErr, text := callTool(t, cs, "memory_add", batch)
		wantAdded := 2.0
		if try == 1 {
			wantAdded = 0
		}
		if isErr || len(out["ids"].([]any)) != 3 || out["added"] != wantAdded {
			t.Errorf("batch try %d: %v %s; want 3 ids, %v added", try, out, text, wantAdded)
		}
	}
	stats, _, _ := callTool(t, cs, "memory_stats", map[string]any{})
	if stats["records"] != 3.0 {
		t.Errorf("%v records, want 3", stats["records"])
	}
	for _, bad := range []map[string]any{
		{"text": "x", "memories": []map[string]any{{"text": "y"}}},
		{},
		{"memories": []map[string]any{{"text": "other"}}, "idempotency_key": "b-1"},
	} {
		if _, isErr, _ := callTool(t, cs, "memory_add", bad); !isErr {
			t.Errorf("memory_add(%v) accepted", bad)
		}
	}
}
