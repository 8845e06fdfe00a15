package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

func TestUpdateSupersedesAndKeepsHistory(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []engine.Mode{engine.ModeFlat, engine.ModeTiered} {
		t.Run(string(mode), func(t *testing.T) {
			clock := &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
			opts := testOptions(clock)
			opts.Mode = mode
			e, err := engine.Open(t.TempDir(), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			ids := remember(t, e,
				engine.Input{Scope: "me", Session: "s", Role: "user", Text: "my cat is called Misu", Sources: []string{"x:1"}},
				engine.Input{Scope: "me", Session: "s", Role: "user", Text: "I live in Porto"})
			clock.t = clock.t.Add(time.Hour)
			v2, err := e.Update(ctx, ids[0], "my cat is called Pixel")
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			v3, err := e.Update(ctx, v2, "my cat is called Nori")
			if err != nil {
				t.Fatalf("Update again: %v", err)
			}
			cur, err := e.Get(v3)
			if err != nil {
				t.Fatal(err)
			}
			if cur.Supersedes != v2 || cur.Scope != "me" || cur.Session != "s" || cur.Role != "user" || len(cur.Sources) != 1 || !cur.Time.Equal(clock.t) {
				t.Errorf("new version = %+v, want supersedes %d, labels and sources kept, time now", cur, v2)
			}
			old, err := e.Get(ids[0])
			if err != nil || old.SupersededBy != v2 || old.Text != "my cat is called Misu" {
				t.Errorf("Get(old) = %+v, %v; want the history version superseded by %d", old, err, v2)
			}
			hist, err := e.History(v3)
			if err != nil || len(hist) != 2 || hist[0].ID != v2 || hist[1].ID != ids[0] {
				t.Errorf("History(%d) = %v, %v; want [%d %d]", v3, hist, err, v2, ids[0])
			}
			got := recallIDs(t, e, engine.Query{Text: "cat called", K: 10})
			if contains(got, ids[0]) || contains(got, v2) || !contains(got, v3) {
				t.Errorf("recall = %v, want %d and none of the history %d, %d", got, v3, ids[0], v2)
			}
			if _, err := e.Update(ctx, ids[0], "again"); !errors.Is(err, engine.ErrSuperseded) {
				t.Errorf("Update(history) err = %v, want ErrSuperseded", err)
			}
			if _, err := e.Update(ctx, 999, "x"); !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("Update(unknown) err = %v, want ErrNotFound", err)
			}
			if _, err := e.Update(ctx, v3, " "); !errors.Is(err, engine.ErrEmptyText) {
				t.Errorf("Update(empty) err = %v, want ErrEmptyText", err)
			}
			page, err := e.List(engine.ListQuery{})
			if err != nil || len(page.Records) != 2 || page.Records[0].ID != ids[1] || page.Records[1].ID != v3 {
				t.Errorf("List = %+v, %v; want [%d %d]", page.Records, err, ids[1], v3)
			}
			// Forgetting a history id deletes the whole chain.
			if err := e.Forget(ctx, v2); err != nil {
				t.Fatalf("Forget(history): %v", err)
			}
			for _, id := range []uint64{ids[0], v2, v3} {
				if _, err := e.Get(id); !errors.Is(err, engine.ErrNotFound) {
					t.Errorf("Get(%d) after forget err = %v, want ErrNotFound", id, err)
				}
			}
			if got := recallIDs(t, e, engine.Query{Text: "cat called", K: 10}); contains(got, v3) {
				t.Errorf("recall after forget = %v, still has %d", got, v3)
			}
		})
	}
}

func TestUpdateSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	e, _ := openTest(t, dir)
	ids := remember(t, e, engine.Input{Text: "the wifi password is hunter2"})
	v2, err := e.Update(context.Background(), ids[0], "the wifi password is correct-horse")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, _ = openTest(t, dir)
	if got := recallIDs(t, e, engine.Query{Text: "wifi password"}); len(got) != 1 || got[0] != v2 {
		t.Errorf("recall after reopen = %v, want [%d]", got, v2)
	}
	if r, err := e.Get(ids[0]); err != nil || r.SupersededBy != v2 {
		t.Errorf("Get(old) after reopen = %+v, %v", r, err)
	}
}

func TestListPagesFiltersAndReverses(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var all []uint64
	for i := range 25 {
		scope := "a"
		if i%2 == 1 {
			scope = "b"
		}
		all = append(all, remember(t, e, engine.Input{Scope: scope, Time: base.Add(time.Duration(25-i) * time.Hour), Text: fmt.Sprintf("note %d", i)})...)
	}
	// Event times run backwards against ids: time order is reverse id order.
	tests := []struct {
		name  string
		q     engine.ListQuery
		want  int
		first uint64
	}{
		{"all", engine.ListQuery{Limit: 7}, 25, all[24]},
		{"reverse", engine.ListQuery{Limit: 7, Reverse: true}, 25, all[0]},
		{"scope", engine.ListQuery{Scope: "a", Limit: 4}, 13, all[24]},
		{"from", engine.ListQuery{From: base.Add(20 * time.Hour), Limit: 3}, 6, all[5]},
		{"to reverse", engine.ListQuery{To: base.Add(3 * time.Hour), Reverse: true, Limit: 1}, 2, all[23]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, seen, listed := tt.q, map[uint64]bool{}, []uint64{}
			for pages := 0; ; pages++ {
				if pages > 30 {
					t.Fatal("listing does not end")
				}
				p, err := e.List(q)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range p.Records {
					if seen[r.ID] {
						t.Fatalf("record %d listed twice", r.ID)
					}
					seen[r.ID] = true
					listed = append(listed, r.ID)
				}
				if p.Next == nil {
					break
				}
				q.After = p.Next
			}
			if len(listed) != tt.want || listed[0] != tt.first {
				t.Errorf("listed %d records starting %v, want %d starting %d", len(listed), listed, tt.want, tt.first)
			}
		})
	}
	if _, err := e.List(engine.ListQuery{After: []byte("short")}); !errors.Is(err, engine.ErrInvalidQuery) {
		t.Errorf("bad position err = %v, want ErrInvalidQuery", err)
	}
}

// Access of a version that was superseded (or forgotten) since the caller
// saw it skips it: its vector is gone, and memory_context failed with
// "wrong vector dimensions: vector is 0 bytes" when it showed one.
func TestAccessSkipsRecordsNoLongerLive(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	ids := remember(t, e,
		engine.Input{Scope: "s", Text: "the staging database runs on port 5433"},
		engine.Input{Scope: "s", Text: "deploys happen on Tuesdays"},
	)
	if _, err := e.Update(context.Background(), ids[0], "the staging database moved to port 6543"); err != nil {
		t.Fatal(err)
	}
	if err := e.Access(ids[0], ids[1]); err != nil {
		t.Fatalf("Access with a superseded id: %v", err)
	}
	if err := e.Forget(context.Background(), ids[1]); err != nil {
		t.Fatal(err)
	}
	if err := e.Access(ids[1]); err != nil {
		t.Fatalf("Access with a forgotten id: %v", err)
	}
}
