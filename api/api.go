// Package api defines the operations hmo offers to agents and their wire
// types: the contract shared by the HTTP API (hmo serve), its client, the
// MCP server (hmo mcp) and the agent hooks (hmo hook). Times are RFC 3339;
// ids are JSON numbers (sequential, far below 2^53); cursors are opaque strings.
package api

import (
	"context"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

// Service is the memory as agents see it. Implementations: a local one over
// an open *engine.Engine, and a client of the hmo daemon. Both must be safe
// for concurrent use.
type Service interface {
	Search(ctx context.Context, req SearchRequest) (SearchResponse, error)
	Get(ctx context.Context, req GetRequest) (GetResponse, error)
	Add(ctx context.Context, req AddRequest) (AddResponse, error)
	Update(ctx context.Context, req UpdateRequest) (UpdateResponse, error)
	Delete(ctx context.Context, req DeleteRequest) (DeleteResponse, error)
	List(ctx context.Context, req ListRequest) (ListResponse, error)
	Context(ctx context.Context, req ContextRequest) (ContextResponse, error)
	Stats(ctx context.Context) (StatsResponse, error)
}

// MemoryReleaser is a Service that can give back memory it holds only as
// a cache, for a server to call when it goes idle. Local implements it.
type MemoryReleaser interface {
	// ReleaseMemory gives back what the service can read again later.
	// It is safe to call at any time, concurrently with requests.
	ReleaseMemory() error
}

// Memory is one record as agents see it.
type Memory struct {
	ID           uint64    `json:"id"`
	Text         string    `json:"text"`
	Scope        string    `json:"scope,omitempty"`
	Session      string    `json:"session,omitempty"`
	Role         string    `json:"role,omitempty"`
	Time         time.Time `json:"time"`
	Sources      []string  `json:"sources,omitempty"`
	Supersedes   uint64    `json:"supersedes,omitempty"`    // the older version this one replaced
	SupersededBy uint64    `json:"superseded_by,omitempty"` // set on history versions
	Score        float64   `json:"score,omitempty"`         // search only: rank score, comparable within one query only
	// Relevance is the calibrated relevance on [0, 1] (search only): the
	// probability that the memory is evidence for the query, comparable
	// across queries and store sizes. min_score filters on it.
	Relevance float64 `json:"relevance,omitempty"`
	Tier      uint8   `json:"tier,omitempty"` // search only: the tier that served it
}

// Filter restricts searches and listings. Zero fields do not filter.
type Filter struct {
	Scope   string    `json:"scope,omitempty"`
	Session string    `json:"session,omitempty"`
	From    time.Time `json:"from,omitzero"` // event time, inclusive
	To      time.Time `json:"to,omitzero"`   // event time, exclusive
}

// SearchRequest asks for the memories most relevant to Query.
type SearchRequest struct {
	Query string `json:"query"`
	K     int    `json:"k,omitempty"` // results per page; default 10, at most 50
	Filter
	MaxTokens int    `json:"max_tokens,omitempty"` // cap on the page's text, estimated; default 4000
	Cursor    string `json:"cursor,omitempty"`     // from a previous page's NextCursor
	// MinScore is the least relevance (Memory.Relevance) returned, on
	// [0, 1]; 0 means DefaultMinScore, a negative value returns every
	// result.
	MinScore float64 `json:"min_score,omitempty"`
}

// SearchResponse is one page of search results, best first.
type SearchResponse struct {
	Results    []Memory `json:"results"`
	NextCursor string   `json:"next_cursor,omitempty"`
	Truncated  bool     `json:"truncated,omitempty"` // texts were shortened to fit MaxTokens
}

// GetRequest fetches memories by id.
type GetRequest struct {
	IDs     []uint64 `json:"ids"`
	History bool     `json:"history,omitempty"` // include older versions (supersede chain)
}

// GetResponse holds the memories found, in request order; Missing lists
// ids that do not exist.
type GetResponse struct {
	Memories []Memory `json:"memories"`
	History  []Memory `json:"history,omitempty"`
	Missing  []uint64 `json:"missing,omitempty"`
	// Truncated says texts were shortened to keep the response small.
	Truncated bool `json:"truncated,omitempty"`
}

// NewMemory is one memory to add.
type NewMemory struct {
	Text    string    `json:"text"`
	Scope   string    `json:"scope,omitempty"`
	Session string    `json:"session,omitempty"`
	Role    string    `json:"role,omitempty"`
	Time    time.Time `json:"time,omitzero"` // default now
	Sources []string  `json:"sources,omitempty"`
}

// AddRequest adds memories in one transaction: all or none. A memory
// already stored (same scope and normalised text, or same scope, role and
// sources) is not stored again: the response names the stored one.
type AddRequest struct {
	Memories []NewMemory `json:"memories"`
	// IdempotencyKey, when set, makes a retried request harmless: a
	// request with the same key and memories stores nothing and gets the
	// first answer again; the same key with other memories fails
	// (conflict). Over HTTP it may come as the Idempotency-Key header.
	// At most 200 bytes.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// AddResponse gives the ids in request order: new records, or the stored
// record a memory duplicates.
type AddResponse struct {
	IDs []uint64 `json:"ids"`
	// Added counts the records created.
	Added int `json:"added"`
	// Duplicates lists the ids in IDs that were already stored: nothing
	// was written for them ("already stored: id N").
	Duplicates []uint64 `json:"duplicates,omitempty"`
	// Note says so in words when there are duplicates, e.g.
	// "already stored: id 5".
	Note string `json:"note,omitempty"`
}

// UpdateRequest supersedes memory ID with new text; the old version stays
// reachable as history (GetRequest.History) but no longer appears in
// searches or listings.
type UpdateRequest struct {
	ID   uint64 `json:"id"`
	Text string `json:"text"`
}

// UpdateResponse names the new version.
type UpdateResponse struct {
	ID         uint64 `json:"id"`
	Supersedes uint64 `json:"supersedes"`
}

// DeleteRequest deletes memories and their history for good.
type DeleteRequest struct {
	IDs []uint64 `json:"ids"`
}

// DeleteResponse counts what was deleted; Missing lists unknown ids.
type DeleteResponse struct {
	Deleted int      `json:"deleted"`
	Missing []uint64 `json:"missing,omitempty"`
}

// ListRequest pages through memories in time order.
type ListRequest struct {
	Filter
	Limit   int    `json:"limit,omitempty"` // default 20, at most 100
	Cursor  string `json:"cursor,omitempty"`
	Reverse bool   `json:"reverse,omitempty"` // newest first
}

// ListResponse is one page of a listing.
type ListResponse struct {
	Memories   []Memory `json:"memories"`
	NextCursor string   `json:"next_cursor,omitempty"`
	// Truncated says texts were shortened to keep the page small.
	Truncated bool `json:"truncated,omitempty"`
}

// ContextRequest asks for a block of memory context to put before a
// prompt, within a token budget.
type ContextRequest struct {
	Prompt    string `json:"prompt"`
	Scope     string `json:"scope,omitempty"`
	MaxTokens int    `json:"max_tokens,omitempty"` // default 1500, at most 8000
	// MinScore is the least relevance of a memory in the block, on
	// [0, 1]; 0 means DefaultMinScore, a negative value takes every
	// candidate.
	MinScore float64 `json:"min_score,omitempty"`
}

// ContextResponse is the rendered context (empty when nothing relevant)
// and the memories it cites.
type ContextResponse struct {
	Context string   `json:"context"`
	IDs     []uint64 `json:"ids"`
	Tokens  int      `json:"tokens"` // estimated
}

// StatsResponse describes the store and, in tiered mode, what the tier
// walk did (sizes, queries served per tier, gate firings).
type StatsResponse struct {
	engine.Stats
	Tiers engine.TierStats `json:"tiers"`
}
