package engine_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
)

// holdingText is a tier index that can tell which documents hold a
// query's terms (engine.TermHolder, through fts.Memory) and counts the
// documents applied to it.
type holdingText struct {
	*fts.Memory
	mu       sync.Mutex
	docs     int
	searches int
}

func (h *holdingText) Search(ctx context.Context, q string, k int, f engine.TextFilter) ([]engine.TextHit, error) {
	h.mu.Lock()
	h.searches++
	h.mu.Unlock()
	return h.Memory.Search(ctx, q, k, f)
}

func (h *holdingText) searched() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.searches
}

func (h *holdingText) Apply(docs []engine.TextDoc, dels []uint64, wm uint64) error {
	h.mu.Lock()
	h.docs += len(docs)
	h.mu.Unlock()
	return h.Memory.Apply(docs, dels, wm)
}

func (h *holdingText) applied() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.docs
}

// TestTier2UnfilledWhenNoTierRecordHoldsQuery checks that the walk does
// not fill Tier 2's lexical index for a question no record of Tiers 1
// and 2 holds every term of (the archive's index says so), and fills it
// for one a Tier 2 record holds; and that both rank exactly as a walk
// that fills it every time (a tier index the engine cannot ask).
func TestTier2UnfilledWhenNoTierRecordHoldsQuery(t *testing.T) {
	clock := &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	topics := []string{"kayak", "violin", "garden", "pottery", "chess"}
	var ins []engine.Input
	for s := range 6 {
		for i, w := range topics {
			n := s*len(topics) + i
			ins = append(ins, engine.Input{Scope: "a", Session: fmt.Sprintf("s%d", s), Role: "user",
				Text: fmt.Sprintf("session %d: we talked about the %s and the %s, code w%c%c", s, w, w, 'a'+n/26, 'a'+n%26),
				Time: clock.t.Add(time.Duration(n) * time.Minute)})
		}
	}
	built := t.TempDir()
	o := testOptions(clock)
	o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = 4, 8, 1, -1
	e, err := engine.Open(built, o)
	if err != nil {
		t.Fatal(err)
	}
	ids := remember(t, e, ins...)
	tierOf := tiersOf(t, e, ids)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// A question of a topic and one record's code: held whole by that
	// record alone.
	question := func(tier uint8) (string, uint64) {
		t.Helper()
		for i, id := range ids {
			if tierOf[id] == tier {
				f := strings.Fields(ins[i].Text)
				return "the " + topics[i%len(topics)] + " code " + f[len(f)-1], id
			}
		}
		t.Fatalf("no record in tier %d: %v", tier, tierOf)
		return "", 0
	}
	archived, _ := question(engine.TierArchive)
	buffered, _ := question(engine.TierBuffer)
	tests := []struct {
		name, q string
		fill    bool // Tier 2's index is filled by the walk
	}{
		{"no tier record holds it", archived, false},
		{"a Tier 2 record holds it", buffered, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got [2][]engine.Result
			var stats [2]engine.TierStats
			for v, asks := range []bool{false, true} {
				dir := t.TempDir()
				if err := os.CopyFS(dir, os.DirFS(built)); err != nil {
					t.Fatal(err)
				}
				var tier2 *holdingText
				o := testOptions(clock)
				o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = 4, 8, 1, -1
				o.NewTierTextIndex = func() (engine.TextIndex, error) {
					m, err := fts.NewMemory("")
					h := &holdingText{Memory: m}
					tier2 = h // the last one made is Tier 2's
					if !asks {
						return struct{ engine.TextIndex }{h}, err // hides TermHolder
					}
					return h, err
				}
				e, err := engine.Open(dir, o)
				if err != nil {
					t.Fatal(err)
				}
				res, err := e.Recall(context.Background(), engine.Query{Text: tc.q, Scope: "a", NoAccess: true})
				if err != nil {
					t.Fatal(err)
				}
				filled := tier2.applied() > 0
				stats[v] = e.TierStats()
				if err := e.Close(); err != nil {
					t.Fatal(err)
				}
				if asks && filled != tc.fill {
					t.Errorf("%q: Tier 2's index filled %t, want %t", tc.q, filled, tc.fill)
				}
				if !asks && !filled {
					t.Errorf("%q: a tier index the engine cannot ask was not filled", tc.q)
				}
				got[v] = res
			}
			if len(got[0]) == 0 || !reflect.DeepEqual(got[0], got[1]) {
				t.Errorf("%q: results differ:\n filled every time %v\n asking the archive %v", tc.q, brief(got[0]), brief(got[1]))
			}
			if stats[0].Served != stats[1].Served {
				t.Errorf("%q: served %v filling every time, %v asking the archive", tc.q, stats[0].Served, stats[1].Served)
			}
		})
	}
}

// brief lists results as id/tier/score.
func brief(res []engine.Result) []string {
	return slices.Collect(func(yield func(string) bool) {
		for _, r := range res {
			if !yield(fmt.Sprintf("%d/t%d/%.4f", r.Record.ID, r.Tier, r.Score)) {
				return
			}
		}
	})
}

// TestTierUnsearchedWhenItsIndexLacksTerms checks that, once Tier 2's
// lexical index is filled, the walk does not search a tier whose own
// index has no document holding every term of the question (Tier 1's, or
// Tier 2's, which holds both tiers), and that it returns and counts what
// a walk searching every tier returns (tier indexes the engine cannot
// ask).
func TestTierUnsearchedWhenItsIndexLacksTerms(t *testing.T) {
	clock := &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	topics := []string{"kayak", "violin", "garden", "pottery", "chess"}
	var ins []engine.Input
	for s := range 6 {
		for i, w := range topics {
			n := s*len(topics) + i
			ins = append(ins, engine.Input{Scope: "a", Session: fmt.Sprintf("s%d", s), Role: "user",
				Text: fmt.Sprintf("session %d: we talked about the %s and the %s, code w%c%c", s, w, w, 'a'+n/26, 'a'+n%26),
				Time: clock.t.Add(time.Duration(n) * time.Minute)})
		}
	}
	options := func() *engine.Options {
		o := testOptions(clock)
		o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = 4, 8, 1, -1
		return o
	}
	built := t.TempDir()
	e, err := engine.Open(built, options())
	if err != nil {
		t.Fatal(err)
	}
	ids := remember(t, e, ins...)
	tierOf := tiersOf(t, e, ids)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// A question of a topic and one record's code: held whole by that
	// record alone.
	question := func(tier uint8) string {
		t.Helper()
		for i, id := range ids {
			if tierOf[id] == tier {
				f := strings.Fields(ins[i].Text)
				return "the " + topics[i%len(topics)] + " code " + f[len(f)-1]
			}
		}
		t.Fatalf("no record in tier %d: %v", tier, tierOf)
		return ""
	}
	fill := question(engine.TierBuffer)
	tests := []struct {
		name, q          string
		search1, search2 bool // the walk that asks searches Tier 1's, Tier 2's index
	}{
		{"no tier record holds it", question(engine.TierArchive), false, false},
		{"a Tier 2 record holds it", fill, false, true},
		// Tier 1 alone holds fewer than K results: it is ranked, not
		// sufficient, and Tier 2, which holds its records, is ranked.
		{"a Tier 1 record holds it", question(engine.TierCache), true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got [2][]engine.Result
			var stats [2]engine.TierStats
			for v, asks := range []bool{false, true} {
				dir := t.TempDir()
				if err := os.CopyFS(dir, os.DirFS(built)); err != nil {
					t.Fatal(err)
				}
				var ix []*holdingText // Tier 1's, then Tier 2's
				o := options()
				o.NewTierTextIndex = func() (engine.TextIndex, error) {
					m, err := fts.NewMemory("")
					h := &holdingText{Memory: m}
					ix = append(ix, h)
					if !asks {
						return struct{ engine.TextIndex }{h}, err // hides TermHolder
					}
					return h, err
				}
				e, err := engine.Open(dir, o)
				if err != nil {
					t.Fatal(err)
				}
				// A Tier 2 record holds it: Tier 2's index is filled.
				if _, err := e.Recall(context.Background(), engine.Query{Text: fill, Scope: "a", NoAccess: true}); err != nil {
					t.Fatal(err)
				}
				if ix[1].applied() == 0 {
					t.Fatalf("%q did not fill Tier 2's index", fill)
				}
				s1, s2 := ix[0].searched(), ix[1].searched()
				before := e.TierStats()
				res, err := e.Recall(context.Background(), engine.Query{Text: tc.q, Scope: "a", NoAccess: true})
				if err != nil {
					t.Fatal(err)
				}
				after := e.TierStats()
				if err := e.Close(); err != nil {
					t.Fatal(err)
				}
				for i := range after.Served {
					stats[v].Served[i] = after.Served[i] - before.Served[i]
				}
				searched1, searched2 := ix[0].searched() > s1, ix[1].searched() > s2
				want1, want2 := tc.search1, tc.search2
				if !asks {
					want1, want2 = true, true
				}
				if searched1 != want1 || searched2 != want2 {
					t.Errorf("%q, asking %t: searched Tier 1 %t, Tier 2 %t; want %t, %t", tc.q, asks, searched1, searched2, want1, want2)
				}
				got[v] = res
			}
			if len(got[0]) == 0 || !reflect.DeepEqual(got[0], got[1]) {
				t.Errorf("%q: results differ:\n searching every tier %v\n asking the tiers' indexes %v", tc.q, brief(got[0]), brief(got[1]))
			}
			if stats[0].Served != stats[1].Served {
				t.Errorf("%q: served %v searching every tier, %v asking the tiers' indexes", tc.q, stats[0].Served, stats[1].Served)
			}
		})
	}
}
