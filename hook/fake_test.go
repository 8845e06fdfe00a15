package hook_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/hook"
)

// fakeService is an in-memory api.Service that records its calls. Its
// Context returns the memories sharing a word of five letters or more
// with the prompt.
type fakeService struct {
	mu       sync.Mutex // guards the fields below
	mems     []api.Memory
	adds     []api.AddRequest
	contexts []api.ContextRequest
	lists    int
	failAdd  bool
}

var _ api.Service = (*fakeService)(nil)

func (f *fakeService) Add(_ context.Context, req api.AddRequest) (api.AddResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.adds = append(f.adds, req)
	if f.failAdd {
		return api.AddResponse{}, fmt.Errorf("fake add failure")
	}
	var res api.AddResponse
	for _, m := range req.Memories {
		if m.Time.IsZero() {
			m.Time = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
		}
		id := uint64(len(f.mems) + 1)
		f.mems = append(f.mems, api.Memory{ID: id, Text: m.Text, Scope: m.Scope, Session: m.Session, Role: m.Role, Time: m.Time, Sources: m.Sources})
		res.IDs = append(res.IDs, id)
	}
	return res, nil
}

func (f *fakeService) List(_ context.Context, req api.ListRequest) (api.ListResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	var match []api.Memory
	for _, m := range f.mems {
		if (req.Scope == "" || m.Scope == req.Scope) && (req.Session == "" || m.Session == req.Session) &&
			(req.From.IsZero() || !m.Time.Before(req.From)) && (req.To.IsZero() || m.Time.Before(req.To)) {
			match = append(match, m)
		}
	}
	slices.SortStableFunc(match, func(a, b api.Memory) int { return a.Time.Compare(b.Time) })
	if req.Reverse {
		slices.Reverse(match)
	}
	start, _ := strconv.Atoi(req.Cursor)
	limit := req.Limit
	if limit == 0 {
		limit = 20
	}
	end := min(start+limit, len(match))
	res := api.ListResponse{Memories: match[min(start, end):end]}
	if end < len(match) {
		res.NextCursor = strconv.Itoa(end)
	}
	return res, nil
}

func (f *fakeService) Context(_ context.Context, req api.ContextRequest) (api.ContextResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.contexts = append(f.contexts, req)
	var lines []string
	var ids []uint64
	for _, m := range f.mems {
		if m.Scope == req.Scope && sharesWord(m.Text, req.Prompt) {
			lines = append(lines, "- "+m.Text)
			ids = append(ids, m.ID)
		}
	}
	text := strings.Join(lines, "\n")
	if text != "" {
		text = api.ContextHeader + text // as api.Local renders it
	}
	return api.ContextResponse{Context: text, IDs: ids, Tokens: len(text) / 4}, nil
}

func sharesWord(a, b string) bool {
	for _, w := range strings.Fields(strings.ToLower(b)) {
		w = strings.Trim(w, "?.,:;")
		if len(w) >= 5 && strings.Contains(strings.ToLower(a), w) {
			return true
		}
	}
	return false
}

func (f *fakeService) Search(context.Context, api.SearchRequest) (api.SearchResponse, error) {
	return api.SearchResponse{}, fmt.Errorf("fake: Search not used by hooks")
}
func (f *fakeService) Get(context.Context, api.GetRequest) (api.GetResponse, error) {
	return api.GetResponse{}, fmt.Errorf("fake: Get not used by hooks")
}
func (f *fakeService) Update(context.Context, api.UpdateRequest) (api.UpdateResponse, error) {
	return api.UpdateResponse{}, fmt.Errorf("fake: Update not used by hooks")
}
func (f *fakeService) Delete(context.Context, api.DeleteRequest) (api.DeleteResponse, error) {
	return api.DeleteResponse{}, fmt.Errorf("fake: Delete not used by hooks")
}
func (f *fakeService) Stats(context.Context) (api.StatsResponse, error) {
	return api.StatsResponse{}, fmt.Errorf("fake: Stats not used by hooks")
}

// memories are the turns stored: the memories other than distilled facts
// and compaction summaries.
func (f *fakeService) memories() []api.Memory {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []api.Memory
	for _, m := range f.mems {
		if m.Role != hook.RoleFact && m.Role != hook.RoleSummary {
			out = append(out, m)
		}
	}
	return out
}

// stuckService never answers until its caller gives up; dead fails at once.
type stuckService struct{ dead bool }

var _ api.Service = stuckService{}

func (s stuckService) wait(ctx context.Context) error {
	if s.dead {
		return fmt.Errorf("dial unix hmo.sock: connection refused")
	}
	<-ctx.Done()
	return ctx.Err()
}

func (s stuckService) Search(ctx context.Context, _ api.SearchRequest) (api.SearchResponse, error) {
	return api.SearchResponse{}, s.wait(ctx)
}
func (s stuckService) Get(ctx context.Context, _ api.GetRequest) (api.GetResponse, error) {
	return api.GetResponse{}, s.wait(ctx)
}
func (s stuckService) Add(ctx context.Context, _ api.AddRequest) (api.AddResponse, error) {
	return api.AddResponse{}, s.wait(ctx)
}
func (s stuckService) Update(ctx context.Context, _ api.UpdateRequest) (api.UpdateResponse, error) {
	return api.UpdateResponse{}, s.wait(ctx)
}
func (s stuckService) Delete(ctx context.Context, _ api.DeleteRequest) (api.DeleteResponse, error) {
	return api.DeleteResponse{}, s.wait(ctx)
}
func (s stuckService) List(ctx context.Context, _ api.ListRequest) (api.ListResponse, error) {
	return api.ListResponse{}, s.wait(ctx)
}
func (s stuckService) Context(ctx context.Context, _ api.ContextRequest) (api.ContextResponse, error) {
	return api.ContextResponse{}, s.wait(ctx)
}
func (s stuckService) Stats(ctx context.Context) (api.StatsResponse, error) {
	return api.StatsResponse{}, s.wait(ctx)
}
