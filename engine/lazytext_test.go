package engine_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
)

// countingText counts the documents applied to a tier view's index.
type countingText struct {
	engine.TextIndex
	mu   sync.Mutex
	docs int
}

func (c *countingText) Apply(docs []engine.TextDoc, dels []uint64, wm uint64) error {
	c.mu.Lock()
	c.docs += len(docs)
	c.mu.Unlock()
	return c.TextIndex.Apply(docs, dels, wm)
}

func (c *countingText) applied() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.docs
}

// TestTier2TextFilledOnFirstSearch checks that a tiered open leaves Tier
// 2's lexical index (which holds Tiers 1 and 2) empty until a query
// searches it, and that the changes made meanwhile are in it then: after
// a Forget made before the first search, a query ranks as after the same
// Forget made once the index was filled.
func TestTier2TextFilledOnFirstSearch(t *testing.T) {
	clock := &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	var ins []engine.Input
	for s := range 4 {
		for i, w := range []string{"kayak", "violin", "garden", "pottery", "chess"} {
			ins = append(ins, engine.Input{Scope: "a", Session: fmt.Sprintf("s%d", s), Role: "user",
				Text: fmt.Sprintf("session %d: we talked about the %s and the %s number %d", s, w, w, i), Time: clock.t.Add(time.Duration(s*10+i) * time.Minute)})
		}
	}
	got := map[bool][]uint64{}
	for _, tc := range []struct {
		name        string
		searchFirst bool // search Tier 2 before the Forget
	}{
		{"forget before the first search", false},
		{"forget after the index is filled", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var idx []*countingText // in creation order: Tier 1's, then Tier 2's
			open := func() *engine.Engine {
				t.Helper()
				idx = nil
				o := testOptions(clock)
				o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = 4, 64, 1, -1
				o.NewTierTextIndex = func() (engine.TextIndex, error) {
					m, err := fts.NewMemory("")
					c := &countingText{TextIndex: m}
					idx = append(idx, c)
					return c, err
				}
				e, err := engine.Open(dir, o)
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
			e := open()
			ids := remember(t, e, ins...)
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			e = open()
			defer e.Close()
			if len(idx) != 2 {
				t.Fatalf("%d tier indexes created, want 2", len(idx))
			}
			if n := idx[1].applied(); n != 0 {
				t.Fatalf("Tier 2's index got %d documents at open, want none before a search", n)
			}
			if idx[0].applied() == 0 {
				t.Fatal("Tier 1's index is empty after open")
			}
			if tc.searchFirst {
				recallIDs(t, e, engine.Query{Text: "chess", Scope: "a", NoAccess: true})
				if idx[1].applied() == 0 {
					t.Fatal("Tier 2's index is empty after a search")
				}
			}
			gone := ids[2] // session 0's "garden": in Tier 2
			if err := e.Forget(context.Background(), gone); err != nil {
				t.Fatal(err)
			}
			res := recallIDs(t, e, engine.Query{Text: "garden", Scope: "a", K: 5, NoAccess: true})
			if idx[1].applied() == 0 {
				t.Fatal("Tier 2's index is empty after a search")
			}
			if contains(res, gone) {
				t.Fatalf("forgotten record %d recalled: %v", gone, res)
			}
			if !contains(res, ids[7]) {
				t.Fatalf("recall %v lacks record %d (session 1's garden)", res, ids[7])
			}
			got[tc.searchFirst] = res
		})
	}
	if !reflect.DeepEqual(got[false], got[true]) {
		t.Fatalf("results %v after a Forget before the first search, %v after one once filled", got[false], got[true])
	}
}
