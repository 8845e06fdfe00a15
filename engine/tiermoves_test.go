package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

// TestTierMovesMatchReopenedViews checks the views after recalls have
// moved records between Tiers 1 and 2: each query ranks as it does once
// the store is reopened and the views are loaded again from bbolt (same
// records, same scores, same tiers), so no move left a record, a row or
// an indexed document behind or counted twice.
func TestTierMovesMatchReopenedViews(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	o := testOptions(clock)
	o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = 6, 8, 1, 3
	e, err := engine.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	topics := []string{"garden", "violin", "hiking", "pottery", "sailing", "chess"}
	var ins []engine.Input
	for i := range 30 {
		ins = append(ins, engine.Input{Session: fmt.Sprint("s", i/3),
			Text: fmt.Sprintf("day %d: more about %s and %s", i, topics[i%len(topics)], topics[(i/2)%len(topics)])})
	}
	remember(t, e, ins...)
	ctx := context.Background()
	for round := range 4 {
		for _, tp := range topics {
			clock.t = clock.t.Add(time.Hour)
			if _, err := e.Recall(ctx, engine.Query{Text: fmt.Sprintf("%s day %d", tp, round*7), K: 3}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if s := e.TierStats(); s.Promotions == 0 || s.Demotions == 0 {
		t.Fatalf("no moves between tiers (%+v): the test does not exercise them", s)
	}
	// "day N" is held whole by record N alone: a record in the tiers is
	// served from them, ranked by their indexes.
	probes := make([]string, len(ins))
	for i := range ins {
		probes[i] = fmt.Sprintf("day %d", i)
	}
	probe := func(e *engine.Engine) []string {
		var out []string
		for _, p := range probes {
			res, err := e.Recall(ctx, engine.Query{Text: p, K: 3, NoAccess: true})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(resultsOf(res)))
		}
		return out
	}
	before := probe(e)
	if s := e.TierStats(); s.Served[1]+s.Served[2] == 0 {
		t.Fatalf("no probe served by the tiers (%+v): the test does not read their indexes", s.Served)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = engine.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	after := probe(e)
	for i := range probes {
		if before[i] != after[i] {
			t.Errorf("%q: after the moves %s, reopened %s", probes[i], before[i], after[i])
		}
	}
}
