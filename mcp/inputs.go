package mcp

import (
	"fmt"
	"reflect"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/schema"
)

// inputSchema is the input schema of a tool taking In, with the limits of
// request from package schema (the one source of request limits).
func inputSchema[In any](request string) *jsonschema.Schema {
	s, err := schema.For(reflect.TypeFor[In](), request)
	if err != nil {
		panic(err) // the input types are fixed: a failure is a programming error
	}
	return s
}

// Tool inputs. They mirror the api requests with agent-oriented
// descriptions, and take times as text (RFC 3339 or a plain date).

type searchInput struct {
	Query     string  `json:"query" jsonschema:"what to look for: a question, a topic or keywords"`
	K         int     `json:"k,omitempty" jsonschema:"results per page, 1 to 50 (default 10)"`
	Scope     string  `json:"scope,omitempty" jsonschema:"only memories of this scope, e.g. a project path or a user name"`
	Session   string  `json:"session,omitempty" jsonschema:"only memories of this session"`
	From      string  `json:"from,omitempty" jsonschema:"only memories at or after this time: RFC 3339 (2024-05-01T15:04:05Z) or a date (2024-05-01)"`
	To        string  `json:"to,omitempty" jsonschema:"only memories before this time: RFC 3339 or a date"`
	MaxTokens int     `json:"max_tokens,omitempty" jsonschema:"token budget of the page, up to 8000 (default 4000); longer texts are shortened"`
	Cursor    string  `json:"cursor,omitempty" jsonschema:"next_cursor from the previous page, with the same query and filters"`
	MinScore  float64 `json:"min_score,omitempty" jsonschema:"least relevance returned, 0 to 1 (default about 0.007: drops unrelated records); negative returns every result"`
}

type getInput struct {
	IDs     []uint64 `json:"ids" jsonschema:"memory ids, 1 to 50"`
	History bool     `json:"history,omitempty" jsonschema:"also return older versions replaced by memory_update"`
}

type addInput struct {
	Text    string   `json:"text,omitempty" jsonschema:"the memory: one self-contained fact, preference, decision or event, at most 64 KiB (or use memories for several)"`
	Scope   string   `json:"scope,omitempty" jsonschema:"where it applies, e.g. a project path or a user name"`
	Session string   `json:"session,omitempty" jsonschema:"the conversation or session it comes from"`
	Role    string   `json:"role,omitempty" jsonschema:"who said it, e.g. user or assistant"`
	Time    string   `json:"time,omitempty" jsonschema:"when it happened: RFC 3339 or a date (default now)"`
	Sources []string `json:"sources,omitempty" jsonschema:"provenance, e.g. file paths or message ids"`
	// Memories is the batch form: several memories in one transaction.
	Memories []memoryInput `json:"memories,omitempty" jsonschema:"several memories stored in one transaction (all or none), up to 100; instead of text"`
	// IdempotencyKey makes a retried call harmless.
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"a unique key for this write (e.g. a UUID): a retry with the same key stores nothing again and returns the same ids"`
}

type memoryInput struct {
	Text    string   `json:"text" jsonschema:"the memory: one self-contained fact, preference, decision or event"`
	Scope   string   `json:"scope,omitempty" jsonschema:"where it applies, e.g. a project path or a user name"`
	Session string   `json:"session,omitempty" jsonschema:"the conversation or session it comes from"`
	Role    string   `json:"role,omitempty" jsonschema:"who said it, e.g. user or assistant"`
	Time    string   `json:"time,omitempty" jsonschema:"when it happened: RFC 3339 or a date (default now)"`
	Sources []string `json:"sources,omitempty" jsonschema:"provenance, e.g. file paths or message ids"`
}

// newMemories turns an add call into the memories it stores: text, or
// memories, not both.
func (in *addInput) newMemories() ([]api.NewMemory, error) {
	single := in.Text != "" || in.Scope != "" || in.Session != "" || in.Role != "" || in.Time != "" || len(in.Sources) > 0
	switch {
	case single && len(in.Memories) > 0:
		return nil, fmt.Errorf("%w: give text or memories, not both", api.ErrInvalid)
	case !single && len(in.Memories) == 0:
		return nil, fmt.Errorf("%w: no text and no memories", api.ErrInvalid)
	}
	ms := in.Memories
	if single {
		ms = []memoryInput{{Text: in.Text, Scope: in.Scope, Session: in.Session, Role: in.Role, Time: in.Time, Sources: in.Sources}}
	}
	out := make([]api.NewMemory, len(ms))
	for i, m := range ms {
		when, err := parseTime("time", m.Time)
		if err != nil {
			return nil, err
		}
		out[i] = api.NewMemory{Text: m.Text, Scope: m.Scope, Session: m.Session, Role: m.Role, Time: when, Sources: m.Sources}
	}
	return out, nil
}

type updateInput struct {
	ID   uint64 `json:"id" jsonschema:"the memory to replace (a current version)"`
	Text string `json:"text" jsonschema:"the corrected or new text"`
}

type deleteInput struct {
	IDs []uint64 `json:"ids" jsonschema:"memory ids to delete with all their older versions, 1 to 1000"`
}

type listInput struct {
	Scope   string `json:"scope,omitempty" jsonschema:"only memories of this scope"`
	Session string `json:"session,omitempty" jsonschema:"only memories of this session"`
	From    string `json:"from,omitempty" jsonschema:"only memories at or after this time: RFC 3339 or a date"`
	To      string `json:"to,omitempty" jsonschema:"only memories before this time: RFC 3339 or a date"`
	Limit   int    `json:"limit,omitempty" jsonschema:"memories per page, 1 to 100 (default 20); a page also ends at about 6000 tokens"`
	Reverse bool   `json:"reverse,omitempty" jsonschema:"newest first"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous page, with the same filters"`
}

type contextInput struct {
	Prompt    string  `json:"prompt" jsonschema:"the task or question the context is for; empty gives the most recent memories"`
	Scope     string  `json:"scope,omitempty" jsonschema:"only memories of this scope"`
	MaxTokens int     `json:"max_tokens,omitempty" jsonschema:"token budget of the block, up to 8000 (default 1500)"`
	MinScore  float64 `json:"min_score,omitempty" jsonschema:"least relevance of a memory in the block, 0 to 1 (default about 0.007); negative takes every candidate"`
}

type statsInput struct{}

// parseTime accepts RFC 3339 or a plain date; empty is the zero time.
func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: %s %q: want RFC 3339 (2024-05-01T15:04:05Z) or a date (2024-05-01)", api.ErrInvalid, field, s)
}

func filter(scope, session, from, to string) (api.Filter, error) {
	f := api.Filter{Scope: scope, Session: session}
	var err error
	if f.From, err = parseTime("from", from); err != nil {
		return f, err
	}
	f.To, err = parseTime("to", to)
	return f, err
}
