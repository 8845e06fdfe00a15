package api

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hmo-dev/hmo/engine"
)

// Local is the Service over an open engine in this process. It does not
// own the engine: the caller closes it. It is safe for concurrent use.
type Local struct {
	e        *engine.Engine
	assembly Assembly // how Context fills its budget; immutable
	noAccess bool     // context blocks are not counted as recalls
}

var (
	_ Service        = (*Local)(nil)
	_ MemoryReleaser = (*Local)(nil)
)

// NewLocal returns the Service over e.
func NewLocal(e *engine.Engine) *Local { return &Local{e: e, assembly: DefaultAssembly} }

// Engine is the engine served.
func (l *Local) Engine() *engine.Engine { return l.e }

// Search runs a hybrid recall and returns one page of it, within
// req.MaxTokens, without the results below req.MinScore. Every page ranks the query to MaxSearchDepth and shows
// the best memories its cursor has not shown yet: pages never repeat a
// memory, and the cursor ends when the ranking is exhausted or
// MaxSearchDepth memories were shown. Writes between pages may add or
// drop memories further down.
func (l *Local) Search(ctx context.Context, req SearchRequest) (SearchResponse, error) {
	k, tokens, err := searchLimits(&req)
	if err != nil {
		return SearchResponse{}, err
	}
	shown, err := searchShown(&req)
	if err != nil {
		return SearchResponse{}, err
	}
	floor, err := minScore(req.MinScore)
	if err != nil {
		return SearchResponse{}, err
	}
	resp := SearchResponse{Results: []Memory{}}
	if len(shown) >= MaxSearchDepth {
		return resp, nil
	}
	// One ranking as deep as paging reaches, whatever the page: the same
	// query ranks the same way on every page. Only the memories on this
	// page count as recalled (HMO: every returned record is accessed).
	res, err := l.e.Recall(ctx, engine.Query{
		Text: req.Query, K: MaxSearchDepth, Scope: req.Scope, Session: req.Session, From: req.From, To: req.To, NoAccess: true,
	})
	if err != nil {
		return SearchResponse{}, err
	}
	b := budget{left: tokens}
	more := false
	for i := range res {
		if shown[res[i].Record.ID] || res[i].Relevance < floor {
			continue
		}
		if len(resp.Results) == k || len(shown)+len(resp.Results) == MaxSearchDepth {
			more = len(shown)+len(resp.Results) < MaxSearchDepth
			break
		}
		m := fromResult(&res[i])
		if !b.fit(&m, len(resp.Results) == 0) {
			more = true
			break
		}
		resp.Results = append(resp.Results, m)
	}
	resp.Truncated = b.truncated
	if err := l.e.Access(shownIDs(resp.Results)...); err != nil {
		return SearchResponse{}, err
	}
	if more && len(resp.Results) > 0 {
		all := shownIDs(resp.Results)
		for id := range shown {
			all = append(all, id)
		}
		resp.NextCursor = searchCursor(&req, all)
	}
	return resp, nil
}

func searchLimits(req *SearchRequest) (k, tokens int, err error) {
	k, tokens = req.K, req.MaxTokens
	if k == 0 {
		k = DefaultSearchK
	}
	if tokens == 0 {
		tokens = DefaultSearchTokens
	}
	switch {
	case k < 0 || k > MaxSearchK:
		return 0, 0, fmt.Errorf("%w: k %d outside [1, %d]", ErrInvalid, k, MaxSearchK)
	case tokens < 0 || tokens > MaxSearchTokens:
		return 0, 0, fmt.Errorf("%w: max_tokens %d outside [1, %d]", ErrInvalid, tokens, MaxSearchTokens)
	}
	return k, tokens, nil
}

// Get fetches memories by id (history versions too), within MaxGetTokens.
func (l *Local) Get(_ context.Context, req GetRequest) (GetResponse, error) {
	if len(req.IDs) == 0 {
		return GetResponse{}, fmt.Errorf("%w: no ids", ErrInvalid)
	}
	if len(req.IDs) > MaxGetIDs {
		return GetResponse{}, fmt.Errorf("%w: %d ids, at most %d", ErrTooLarge, len(req.IDs), MaxGetIDs)
	}
	resp := GetResponse{Memories: []Memory{}}
	// Room is kept for every id after the first to appear, shortened.
	b := budget{left: MaxGetTokens - (len(req.IDs)-1)*minMemoryTokens}
	for i, id := range req.IDs {
		r, err := l.e.Get(id)
		if err != nil {
			if errors.Is(err, engine.ErrNotFound) {
				resp.Missing = append(resp.Missing, id)
				continue
			}
			return GetResponse{}, err
		}
		m := fromRecord(&r)
		if i > 0 {
			b.left += minMemoryTokens
		}
		b.fit(&m, true)
		resp.Memories = append(resp.Memories, m)
	}
	if req.History {
		if err := l.history(&resp, &b); err != nil {
			return GetResponse{}, err
		}
	}
	resp.Truncated = b.truncated
	return resp, nil
}

// history appends the older versions of the memories in resp, newest
// first per memory, at most MaxHistory in all.
func (l *Local) history(resp *GetResponse, b *budget) error {
	seen := map[uint64]bool{}
	for _, m := range resp.Memories {
		seen[m.ID] = true
	}
	for _, m := range resp.Memories {
		hist, err := l.e.History(m.ID)
		if err != nil {
			if errors.Is(err, engine.ErrNotFound) {
				continue // deleted since
			}
			return err
		}
		for i := range hist {
			if seen[hist[i].ID] || len(resp.History) == MaxHistory {
				continue
			}
			seen[hist[i].ID] = true
			h := fromRecord(&hist[i])
			if !b.fit(&h, b.left >= minMemoryTokens) {
				b.truncated = true // out of room: older versions left out
				return nil
			}
			resp.History = append(resp.History, h)
		}
	}
	return nil
}

// Add stores memories in one transaction.
func (l *Local) Add(ctx context.Context, req AddRequest) (AddResponse, error) {
	if len(req.Memories) == 0 {
		return AddResponse{}, fmt.Errorf("%w: no memories", ErrInvalid)
	}
	if len(req.Memories) > MaxAddMemories {
		return AddResponse{}, fmt.Errorf("%w: %d memories, at most %d", ErrTooLarge, len(req.Memories), MaxAddMemories)
	}
	ins := make([]engine.Input, len(req.Memories))
	for i, m := range req.Memories {
		ins[i] = engine.Input{Scope: m.Scope, Session: m.Session, Role: m.Role, Time: m.Time, Text: m.Text, Sources: m.Sources}
	}
	out, err := l.e.RememberBatch(ctx, engine.Batch{Inputs: ins, Key: req.IdempotencyKey})
	if err != nil && out == nil {
		return AddResponse{}, err
	}
	// A non-nil error with a result means the records are stored and an
	// index update was deferred to the next open: the write is acknowledged.
	return addResponse(out), nil
}

func addResponse(out []engine.Stored) AddResponse {
	resp := AddResponse{IDs: make([]uint64, len(out))}
	for i, s := range out {
		resp.IDs[i] = s.ID
		if s.Duplicate {
			if !slices.Contains(resp.Duplicates, s.ID) {
				resp.Duplicates = append(resp.Duplicates, s.ID)
			}
		} else {
			resp.Added++
		}
	}
	if n := len(resp.Duplicates); n > 0 {
		ids := make([]string, n)
		for i, id := range resp.Duplicates {
			ids[i] = strconv.FormatUint(id, 10)
		}
		resp.Note = "already stored: id " + strings.Join(ids, ", ")
		if n > 1 {
			resp.Note = "already stored: ids " + strings.Join(ids, ", ")
		}
	}
	return resp
}

// Update supersedes a memory with new text.
func (l *Local) Update(ctx context.Context, req UpdateRequest) (UpdateResponse, error) {
	if req.ID == 0 {
		return UpdateResponse{}, fmt.Errorf("%w: no id", ErrInvalid)
	}
	id, err := l.e.Update(ctx, req.ID, req.Text)
	if err != nil && id == 0 {
		return UpdateResponse{}, err
	}
	return UpdateResponse{ID: id, Supersedes: req.ID}, nil
}

// Delete deletes memories and their history; unknown ids are reported,
// not an error.
func (l *Local) Delete(ctx context.Context, req DeleteRequest) (DeleteResponse, error) {
	if len(req.IDs) == 0 {
		return DeleteResponse{}, fmt.Errorf("%w: no ids", ErrInvalid)
	}
	if len(req.IDs) > MaxDeleteIDs {
		return DeleteResponse{}, fmt.Errorf("%w: %d ids, at most %d", ErrTooLarge, len(req.IDs), MaxDeleteIDs)
	}
	var resp DeleteResponse
	var found []uint64
	for _, id := range req.IDs {
		if slices.Contains(found, id) {
			continue
		}
		if _, err := l.e.Get(id); err != nil {
			if !errors.Is(err, engine.ErrNotFound) {
				return DeleteResponse{}, err
			}
			resp.Missing = append(resp.Missing, id)
			continue
		}
		found = append(found, id)
	}
	if len(found) > 0 {
		if err := l.e.Forget(ctx, found...); err != nil {
			return DeleteResponse{}, err
		}
	}
	resp.Deleted = len(found)
	return resp, nil
}

// List returns one page of current memories in event-time order, within
// ListTokens.
func (l *Local) List(_ context.Context, req ListRequest) (ListResponse, error) {
	limit := req.Limit
	if limit == 0 {
		limit = DefaultListSize
	}
	if limit < 0 || limit > MaxListSize {
		return ListResponse{}, fmt.Errorf("%w: limit %d outside [1, %d]", ErrInvalid, limit, MaxListSize)
	}
	pos, err := listPosition(&req)
	if err != nil {
		return ListResponse{}, err
	}
	page, err := l.e.List(engine.ListQuery{
		Scope: req.Scope, Session: req.Session, From: req.From, To: req.To,
		Limit: limit, Reverse: req.Reverse, After: pos,
	})
	if err != nil {
		return ListResponse{}, err
	}
	resp := ListResponse{Memories: []Memory{}}
	b := budget{left: ListTokens}
	for i := range page.Records {
		m := fromRecord(&page.Records[i])
		if !b.fit(&m, i == 0) {
			// The page is full: continue after the last one kept.
			resp.NextCursor = listCursor(&req, engine.Position(&page.Records[i-1]))
			resp.Truncated = b.truncated
			return resp, nil
		}
		resp.Memories = append(resp.Memories, m)
	}
	resp.Truncated = b.truncated
	if page.Next != nil {
		resp.NextCursor = listCursor(&req, page.Next)
	}
	return resp, nil
}

// Stats describes the store.
func (l *Local) Stats(context.Context) (StatsResponse, error) {
	s, err := l.e.Stats()
	if err != nil {
		return StatsResponse{}, err
	}
	return StatsResponse{Stats: s, Tiers: l.e.TierStats()}, nil
}

// ReleaseMemory gives back the store pages the process has mapped
// (engine.Engine.ReleaseMemory).
func (l *Local) ReleaseMemory() error { return l.e.ReleaseMemory() }

func fromRecord(r *engine.Record) Memory {
	return Memory{
		ID: r.ID, Text: r.Text, Scope: r.Scope, Session: r.Session, Role: r.Role,
		Time: r.Time.UTC(), Sources: r.Sources,
		Supersedes: r.Supersedes, SupersededBy: r.SupersededBy,
	}
}

func fromResult(r *engine.Result) Memory {
	m := fromRecord(&r.Record)
	m.Score, m.Relevance, m.Tier = r.Score, r.Relevance, r.Tier
	return m
}

// shownIDs lists the ids of the memories a response returns.
func shownIDs(ms []Memory) []uint64 {
	ids := make([]uint64, len(ms))
	for i := range ms {
		ids[i] = ms[i].ID
	}
	return ids
}
