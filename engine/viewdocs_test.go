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

// recordingText keeps the last document applied to an index for each id.
type recordingText struct {
	engine.TextIndex
	mu   sync.Mutex
	last map[uint64]engine.TextDoc
}

func (r *recordingText) Apply(docs []engine.TextDoc, dels []uint64, wm uint64) error {
	r.mu.Lock()
	for _, d := range docs {
		r.last[d.ID] = d
	}
	r.mu.Unlock()
	return r.TextIndex.Apply(docs, dels, wm)
}

// TestReopenedViewsIndexArchiveDocuments checks that after a tiered open
// the tier indexes hold the very documents (text, context turns, role,
// labels) the archive's index was given, for records whose context turn
// is in the tiers, in the archive, past a derived record, or forgotten
// after the open and before Tier 2's index is filled.
func TestReopenedViewsIndexArchiveDocuments(t *testing.T) {
	clock := &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	for _, tc := range []struct {
		context int
		forget  bool // forget a turn whose next turn is in Tier 2, before the fill
	}{{1, false}, {2, false}, {1, true}, {2, true}} {
		t.Run(fmt.Sprintf("context %d forget %t", tc.context, tc.forget), func(t *testing.T) {
			dir := t.TempDir()
			var tiers []*recordingText
			var archive *recordingText
			open := func() *engine.Engine {
				t.Helper()
				tiers = nil
				o := testOptions(clock)
				o.IndexContext = tc.context
				o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = 6, 20, 1, -1
				o.OpenTextIndex = func(dir string) (engine.TextIndex, error) {
					x, err := fts.Open(dir, nil)
					archive = &recordingText{TextIndex: x, last: map[uint64]engine.TextDoc{}}
					return archive, err
				}
				o.NewTierTextIndex = func() (engine.TextIndex, error) {
					m, err := fts.NewMemory("")
					r := &recordingText{TextIndex: m, last: map[uint64]engine.TextDoc{}}
					tiers = append(tiers, r)
					return r, err
				}
				e, err := engine.Open(dir, o)
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
			e := open()
			var ins []engine.Input
			for s := range 5 {
				for i := range 6 {
					role := []string{"user", "assistant"}[i%2]
					if i == 3 {
						role = "fact" // derived: nobody's context
					}
					ins = append(ins, engine.Input{Scope: "a", Session: fmt.Sprintf("s%d", s), Role: role,
						Text: fmt.Sprintf("session %d turn %d about the kayak and the violin", s, i), Time: clock.t.Add(time.Duration(s*10+i) * time.Minute)})
				}
			}
			ids := remember(t, e, ins...)
			tierOf := tiersOf(t, e, ids)
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			// The archive's index is given each record's document by the
			// change log's path, which reads the context turns from bbolt:
			// the reference, with those a Forget re-indexes after the open.
			want := archive.last
			e = open()
			defer e.Close()
			if tc.forget {
				gone := uint64(0)
				for i := 1; i < len(ids); i++ {
					if tierOf[ids[i]] == engine.TierBuffer && ins[i-1].Role != "fact" && ins[i].Session == ins[i-1].Session {
						gone = ids[i-1]
						break
					}
				}
				if gone == 0 {
					t.Fatalf("no Tier 2 turn after a turn of its session: %v", tierOf)
				}
				if err := e.Forget(context.Background(), gone); err != nil {
					t.Fatal(err)
				}
			}
			for id, d := range archive.last {
				want[id] = d
			}
			// A search that reaches Tier 2 fills its index.
			if _, err := e.Recall(context.Background(), engine.Query{Text: "kayak violin", Scope: "a", NoAccess: true}); err != nil {
				t.Fatal(err)
			}
			got := map[uint64]engine.TextDoc{}
			for _, r := range tiers {
				for id, d := range r.last {
					got[id] = d
				}
			}
			if len(got) < 20 {
				t.Fatalf("the reopened tier indexes were given %d documents, want at least 20", len(got))
			}
			withContext := 0
			for id, d := range got {
				w, ok := want[id]
				if !ok {
					t.Errorf("record %d indexed in the tiers, not in the archive", id)
					continue
				}
				if !reflect.DeepEqual(d, w) {
					t.Errorf("record %d:\n tiers   %+v\n archive %+v", id, d, w)
				}
				if d.Context != "" {
					withContext++
				}
			}
			if withContext == 0 {
				t.Fatal("no document with a context turn compared")
			}
		})
	}
}
