package api_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/teststore"
)

func newLocal(t testing.TB) *api.Local {
	t.Helper()
	return api.NewLocal(teststore.Open(t))
}

func add(t testing.TB, s api.Service, ms ...api.NewMemory) []uint64 {
	t.Helper()
	resp, err := s.Add(context.Background(), api.AddRequest{Memories: ms})
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	return resp.IDs
}

func TestSearchPagesWithoutRepeats(t *testing.T) {
	ctx := context.Background()
	e := teststore.Open(t)
	s := api.NewLocal(e)
	var ms []api.NewMemory
	for i := range 30 {
		ms = append(ms, api.NewMemory{Scope: "p", Text: fmt.Sprintf("garden note %d about tomatoes", i)})
	}
	add(t, s, ms...)
	req := api.SearchRequest{Query: "garden tomatoes", K: 7, Filter: api.Filter{Scope: "p"}}
	seen := map[uint64]bool{}
	pages := 0
	for {
		resp, err := s.Search(ctx, req)
		if err != nil {
			t.Fatalf("Search page %d: %v", pages, err)
		}
		pages++
		for _, m := range resp.Results {
			if seen[m.ID] {
				t.Fatalf("memory %d on two pages", m.ID)
			}
			seen[m.ID] = true
		}
		if resp.NextCursor == "" {
			break
		}
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		req.Cursor = resp.NextCursor
	}
	if len(seen) != 30 || pages != 5 {
		t.Errorf("paged %d memories in %d pages, want 30 in 5", len(seen), pages)
	}
	// Each memory was shown once, so each counts one recall, although
	// later pages recomputed the earlier ones.
	for id := range seen {
		if r, err := e.Get(id); err != nil || r.Header.N != 1 {
			t.Errorf("memory %d: recall count %d (%v), want 1", id, r.Header.N, err)
		}
	}
	// A cursor is bound to its query.
	req.Query = "other"
	if _, err := s.Search(ctx, req); !errors.Is(err, api.ErrBadCursor) || api.Code(err) != api.CodeInvalid {
		t.Errorf("foreign cursor err = %v (code %s), want ErrBadCursor, invalid", err, api.Code(err))
	}
}

func TestResponsesStayWithinBudget(t *testing.T) {
	ctx := context.Background()
	s := newLocal(t)
	big := strings.Repeat("elephant memory ", 4000) // 64,000 bytes
	var ms []api.NewMemory
	for i := range 20 {
		ms = append(ms, api.NewMemory{Text: big + strconv.Itoa(i)})
	}
	ids := add(t, s, ms...)
	sr, err := s.Search(ctx, api.SearchRequest{Query: "elephant", K: 50, MaxTokens: 8000})
	if err != nil {
		t.Fatal(err)
	}
	if tok := tokensOf(sr.Results); tok > 8000 || len(sr.Results) != 1 || !sr.Truncated || sr.NextCursor == "" {
		t.Errorf("search: %d results, ~%d tokens, truncated %v, cursor %q; want 1 shortened within 8000 and a cursor", len(sr.Results), tok, sr.Truncated, sr.NextCursor)
	}
	gr, err := s.Get(ctx, api.GetRequest{IDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	if tok := tokensOf(gr.Memories); tok > api.MaxGetTokens || len(gr.Memories) != 20 || !gr.Truncated {
		t.Errorf("get: %d memories, ~%d tokens, truncated %v", len(gr.Memories), tok, gr.Truncated)
	}
	lr, err := s.List(ctx, api.ListRequest{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if tok := tokensOf(lr.Memories); tok > api.ListTokens || lr.NextCursor == "" {
		t.Errorf("list: %d memories, ~%d tokens, cursor %q", len(lr.Memories), tok, lr.NextCursor)
	}
	cr, err := s.Context(ctx, api.ContextRequest{Prompt: "elephant", MaxTokens: 500})
	if err != nil {
		t.Fatal(err)
	}
	if cr.Tokens > 500 || len(cr.IDs) != 1 || !strings.HasSuffix(cr.Context, "…\n") {
		t.Errorf("context: %d tokens, ids %v, ends %q", cr.Tokens, cr.IDs, cr.Context[max(0, len(cr.Context)-10):])
	}
}

func tokensOf(ms []api.Memory) int {
	n := 0
	for _, m := range ms {
		n += api.EstimateTokens(m.Text) + api.MemoryOverheadBytes/api.BytesPerToken
	}
	return n
}

func TestUpdateGetHistoryDelete(t *testing.T) {
	ctx := context.Background()
	s := newLocal(t)
	ids := add(t, s, api.NewMemory{Scope: "me", Text: "I drink coffee every morning"})
	up, err := s.Update(ctx, api.UpdateRequest{ID: ids[0], Text: "I switched to green tea"})
	if err != nil || up.Supersedes != ids[0] || up.ID == ids[0] {
		t.Fatalf("Update = %+v, %v", up, err)
	}
	gr, err := s.Get(ctx, api.GetRequest{IDs: []uint64{up.ID, 999}, History: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(gr.Memories) != 1 || gr.Memories[0].Supersedes != ids[0] || len(gr.History) != 1 ||
		gr.History[0].SupersededBy != up.ID || len(gr.Missing) != 1 || gr.Missing[0] != 999 {
		t.Errorf("Get with history = %+v", gr)
	}
	if _, err := s.Update(ctx, api.UpdateRequest{ID: ids[0], Text: "x"}); api.Code(err) != api.CodeConflict {
		t.Errorf("update of history: err %v, code %s, want conflict", err, api.Code(err))
	}
	dr, err := s.Delete(ctx, api.DeleteRequest{IDs: []uint64{ids[0], 12345}})
	if err != nil || dr.Deleted != 1 || len(dr.Missing) != 1 {
		t.Errorf("Delete = %+v, %v; want 1 deleted, 1 missing", dr, err)
	}
	gr, err = s.Get(ctx, api.GetRequest{IDs: []uint64{ids[0], up.ID}})
	if err != nil || len(gr.Missing) != 2 {
		t.Errorf("Get after delete = %+v, %v; want both missing", gr, err)
	}
}

func TestListTimelineAndContext(t *testing.T) {
	ctx := context.Background()
	s := newLocal(t)
	t0 := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range 9 {
		add(t, s, api.NewMemory{Scope: "a", Session: "s1", Role: "user", Time: t0.Add(time.Duration(i) * time.Hour), Text: fmt.Sprintf("entry %d", i)})
	}
	req := api.ListRequest{Filter: api.Filter{Scope: "a"}, Limit: 4, Reverse: true}
	var got []string
	for range 5 {
		resp, err := s.List(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range resp.Memories {
			got = append(got, m.Text)
		}
		if req.Cursor = resp.NextCursor; req.Cursor == "" {
			break
		}
	}
	if len(got) != 9 || got[0] != "entry 8" || got[8] != "entry 0" {
		t.Errorf("listed %v, want entries 8..0", got)
	}
	cr, err := s.Context(ctx, api.ContextRequest{Scope: "a"})
	if err != nil || len(cr.IDs) != 9 || !strings.Contains(cr.Context, "user] entry 8") {
		t.Errorf("recent context = %+v, %v", cr, err)
	}
	cr, err = s.Context(ctx, api.ContextRequest{Prompt: "entry", Scope: "nobody"})
	if err != nil || cr.Context != "" || len(cr.IDs) != 0 {
		t.Errorf("context of an empty scope = %+v, %v; want empty", cr, err)
	}
}

func TestBadRequestsAreInvalid(t *testing.T) {
	ctx := context.Background()
	s := newLocal(t)
	tests := []struct {
		name string
		call func() error
		code string
	}{
		{"empty query", func() error { _, err := s.Search(ctx, api.SearchRequest{Query: " "}); return err }, api.CodeInvalid},
		{"k too big", func() error { _, err := s.Search(ctx, api.SearchRequest{Query: "a", K: 51}); return err }, api.CodeInvalid},
		{"bad cursor", func() error { _, err := s.Search(ctx, api.SearchRequest{Query: "a", Cursor: "!!"}); return err }, api.CodeInvalid},
		{"no memories", func() error { _, err := s.Add(ctx, api.AddRequest{}); return err }, api.CodeInvalid},
		{"empty text", func() error { _, err := s.Add(ctx, api.AddRequest{Memories: []api.NewMemory{{Text: ""}}}); return err }, api.CodeInvalid},
		{"too many", func() error {
			_, err := s.Add(ctx, api.AddRequest{Memories: make([]api.NewMemory, api.MaxAddMemories+1)})
			return err
		}, api.CodeTooLarge},
		{"huge text", func() error {
			_, err := s.Add(ctx, api.AddRequest{Memories: []api.NewMemory{{Text: strings.Repeat("x", engine.DefaultMaxTextBytes+1)}}})
			return err
		}, api.CodeTooLarge},
		{"update unknown", func() error { _, err := s.Update(ctx, api.UpdateRequest{ID: 77, Text: "x"}); return err }, api.CodeNotFound},
		{"get nothing", func() error { _, err := s.Get(ctx, api.GetRequest{}); return err }, api.CodeInvalid},
		{"list limit", func() error { _, err := s.List(ctx, api.ListRequest{Limit: 101}); return err }, api.CodeInvalid},
		{"list cursor", func() error { _, err := s.List(ctx, api.ListRequest{Cursor: "bG9vaw"}); return err }, api.CodeInvalid},
		{"context budget", func() error { _, err := s.Context(ctx, api.ContextRequest{MaxTokens: 9000}); return err }, api.CodeInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if got := api.Code(err); err == nil || got != tt.code {
				t.Errorf("err = %v, code %q; want code %q", err, got, tt.code)
			}
		})
	}
	if st, err := s.Stats(ctx); err != nil || st.Records != 0 {
		t.Errorf("bad requests changed the store: %+v, %v", st, err)
	}
}

// TestSearchPagesToTheEnd reproduces issue 12: on a store of a few
// thousand records, memory_search pages 1-11 were fine, page 12 repeated
// ids of pages 10 and 11 with rising scores, 40 pages held 200 results
// but 170 distinct ids, and the cursor never ended. Pages must hold
// distinct ids, scores must not rise, and the cursor must end.
func TestSearchPagesToTheEnd(t *testing.T) {
	for _, mode := range []engine.Mode{engine.ModeFlat, engine.ModeTiered} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := context.Background()
			o := teststore.Options()
			o.Mode = mode
			e, err := engine.Open(t.TempDir(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			s := api.NewLocal(e)
			words := []string{"garden", "tomatoes", "basil", "compost", "river", "train", "coffee", "guitar"}
			for b := range 30 {
				var ms []api.NewMemory
				for i := range 100 {
					n := b*100 + i
					ms = append(ms, api.NewMemory{Scope: "p", Session: fmt.Sprint("s", n/50),
						Text: fmt.Sprintf("note %d: %s and %s, %s", n, words[n%8], words[(n/8)%8], words[(n/64)%8])})
				}
				add(t, s, ms...)
			}
			req := api.SearchRequest{Query: "garden tomatoes compost", K: 5}
			seen := map[uint64]int{}
			total, pages, last := 0, 0, 2.0
			for ; pages < 60; pages++ {
				resp, err := s.Search(ctx, req)
				if err != nil {
					t.Fatalf("page %d: %v", pages+1, err)
				}
				for _, m := range resp.Results {
					if p, ok := seen[m.ID]; ok {
						t.Fatalf("page %d repeats id %d of page %d", pages+1, m.ID, p)
					}
					seen[m.ID] = pages + 1
					total++
					if mode == engine.ModeFlat && m.Score > last {
						t.Errorf("page %d: score rises to %.3f after %.3f", pages+1, m.Score, last)
					}
					last = m.Score
				}
				if resp.NextCursor == "" {
					pages++
					break
				}
				req.Cursor = resp.NextCursor
			}
			if pages > api.MaxSearchDepth/5 {
				t.Fatalf("cursor did not end after %d pages (%d results)", pages, total)
			}
			if total != len(seen) || total != api.MaxSearchDepth {
				t.Errorf("%d results, %d distinct ids in %d pages; want %d distinct", total, len(seen), pages, api.MaxSearchDepth)
			}
		})
	}
}
