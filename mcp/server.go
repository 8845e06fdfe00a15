package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/schema"
)

// Defaults for Options.
const (
	DefaultName = "hmo"
)

// instructions tell the agent how to use the memory.
const instructions = `hmo is your long-term memory, kept on this device across sessions.
Before answering questions that may depend on earlier sessions (the user's preferences, past decisions, project facts), call memory_context or memory_search.
When you learn something worth keeping, call memory_add with one self-contained fact per memory and a scope (e.g. the project path).
When a stored fact changes, call memory_update on it rather than adding a contradiction; memory_delete removes a memory for good.
Results are paged: pass next_cursor back to get more.`

// Options configure the MCP server. A nil *Options means the defaults.
type Options struct {
	// Name is the server name announced to clients. Default DefaultName.
	Name string
	// Version is the version announced to clients. Default "dev".
	Version string
}

// NewServer returns an MCP server offering the memory tools over svc.
// Run it with a transport, e.g. srv.Run(ctx, &sdk.StdioTransport{}). It
// is safe for concurrent use (as svc must be).
func NewServer(svc api.Service, opts *Options) *sdk.Server {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	s := sdk.NewServer(&sdk.Implementation{Name: o.Name, Title: "hmo memory", Version: o.Version},
		&sdk.ServerOptions{Instructions: instructions})
	t := tools{svc}
	sdk.AddTool(s, &sdk.Tool{
		Name:        "memory_search",
		InputSchema: inputSchema[searchInput](schema.Search),
		Description: "Search long-term memory by meaning and keywords (hybrid BM25 + vector). Returns one page of memories, best first, within a token budget, each with a calibrated relevance (0 to 1, comparable across queries); results below min_score are left out, so an unrelated query returns nothing. Pass next_cursor back for the next page; paging ends when next_cursor is empty. Filters: scope, session, time range.",
		Annotations: readOnly("Search memory"),
	}, t.search)
	sdk.AddTool(s, &sdk.Tool{
		Name:        "memory_get",
		InputSchema: inputSchema[getInput](schema.Get),
		Description: "Fetch memories by id, optionally with their older versions (history). Unknown ids are listed in missing. Very long texts are shortened to keep the response small (truncated is then true).",
		Annotations: readOnly("Get memories"),
	}, t.get)
	sdk.AddTool(s, &sdk.Tool{
		Name:        "memory_add",
		InputSchema: inputSchema[addInput](schema.Add),
		Description: "Remember a memory (text) or several in one call (memories): self-contained facts, preferences, decisions or events. Returns their ids; a memory already stored is not stored twice (its id is listed in duplicates). Pass idempotency_key so a retry never duplicates. Use memory_update instead when it corrects an existing memory.",
		Annotations: &sdk.ToolAnnotations{Title: "Add a memory", DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, t.add)
	sdk.AddTool(s, &sdk.Tool{
		Name:        "memory_update",
		InputSchema: inputSchema[updateInput](schema.Update),
		Description: "Replace a memory's text with a new version. The old version stays readable as history (memory_get with history) but no longer appears in search, list or context. Returns the new version's id.",
		Annotations: &sdk.ToolAnnotations{Title: "Update a memory", DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, t.update)
	sdk.AddTool(s, &sdk.Tool{
		Name:        "memory_delete",
		InputSchema: inputSchema[deleteInput](schema.Delete),
		Description: "Delete memories for good, with all their older versions. Unknown ids are listed in missing.",
		Annotations: &sdk.ToolAnnotations{Title: "Delete memories", DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, t.delete)
	sdk.AddTool(s, &sdk.Tool{
		Name:        "memory_list",
		InputSchema: inputSchema[listInput](schema.List),
		Description: "List current memories in time order (a timeline), one page at a time; reverse for newest first. Pass next_cursor back for the next page. Filters: scope, session, time range.",
		Annotations: readOnly("List memories"),
	}, t.list)
	sdk.AddTool(s, &sdk.Tool{
		Name:        "memory_context",
		InputSchema: inputSchema[contextInput](schema.Context),
		Description: "Get a ready-to-read block of the memories relevant to a prompt, within a token budget (default 1500). Empty context means nothing relevant is stored.",
		Annotations: readOnly("Memory context"),
	}, t.context)
	sdk.AddTool(s, &sdk.Tool{
		Name:        "memory_stats",
		InputSchema: inputSchema[statsInput](schema.Stats),
		Description: "Describe the memory store: records, sessions, scopes, size on disk, embedder and index state.",
		Annotations: readOnly("Memory stats"),
	}, t.stats)
	addResources(s, svc)
	return s
}

func ptr[T any](v T) *T { return &v }

func readOnly(title string) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true, OpenWorldHint: ptr(false)}
}

// tools are the tool handlers. An error returned by a handler becomes a
// tool error result.
type tools struct{ svc api.Service }

func (t tools) search(ctx context.Context, _ *sdk.CallToolRequest, in searchInput) (*sdk.CallToolResult, api.SearchResponse, error) {
	f, err := filter(in.Scope, in.Session, in.From, in.To)
	if err != nil {
		return nil, api.SearchResponse{}, err
	}
	resp, err := t.svc.Search(ctx, api.SearchRequest{Query: in.Query, K: in.K, Filter: f, MaxTokens: in.MaxTokens, Cursor: in.Cursor, MinScore: in.MinScore})
	return nil, resp, err
}

func (t tools) get(ctx context.Context, _ *sdk.CallToolRequest, in getInput) (*sdk.CallToolResult, api.GetResponse, error) {
	resp, err := t.svc.Get(ctx, api.GetRequest{IDs: in.IDs, History: in.History})
	return nil, resp, err
}

func (t tools) add(ctx context.Context, _ *sdk.CallToolRequest, in addInput) (*sdk.CallToolResult, api.AddResponse, error) {
	ms, err := in.newMemories()
	if err != nil {
		return nil, api.AddResponse{}, err
	}
	resp, err := t.svc.Add(ctx, api.AddRequest{Memories: ms, IdempotencyKey: in.IdempotencyKey})
	return nil, resp, err
}

func (t tools) update(ctx context.Context, _ *sdk.CallToolRequest, in updateInput) (*sdk.CallToolResult, api.UpdateResponse, error) {
	resp, err := t.svc.Update(ctx, api.UpdateRequest{ID: in.ID, Text: in.Text})
	return nil, resp, err
}

func (t tools) delete(ctx context.Context, _ *sdk.CallToolRequest, in deleteInput) (*sdk.CallToolResult, api.DeleteResponse, error) {
	resp, err := t.svc.Delete(ctx, api.DeleteRequest{IDs: in.IDs})
	return nil, resp, err
}

func (t tools) list(ctx context.Context, _ *sdk.CallToolRequest, in listInput) (*sdk.CallToolResult, api.ListResponse, error) {
	f, err := filter(in.Scope, in.Session, in.From, in.To)
	if err != nil {
		return nil, api.ListResponse{}, err
	}
	resp, err := t.svc.List(ctx, api.ListRequest{Filter: f, Limit: in.Limit, Cursor: in.Cursor, Reverse: in.Reverse})
	return nil, resp, err
}

func (t tools) context(ctx context.Context, _ *sdk.CallToolRequest, in contextInput) (*sdk.CallToolResult, api.ContextResponse, error) {
	resp, err := t.svc.Context(ctx, api.ContextRequest{Prompt: in.Prompt, Scope: in.Scope, MaxTokens: in.MaxTokens, MinScore: in.MinScore})
	return nil, resp, err
}

func (t tools) stats(ctx context.Context, _ *sdk.CallToolRequest, _ statsInput) (*sdk.CallToolResult, api.StatsResponse, error) {
	resp, err := t.svc.Stats(ctx)
	return nil, resp, err
}
