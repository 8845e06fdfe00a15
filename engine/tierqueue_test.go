package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

// TestQueuedViewChangesRankAlike: the changes a recall's access makes
// to the tier views' lexical indexes wait for the next reader of the
// index, which applies them in merged runs. Three engines fed the same
// records and questions, one as it is, one whose queued changes are
// applied after every recall (as the access applied them before) and one
// that also writes the tier counters in the recall (no flusher), give
// the same results (records, tiers, scores, headers) to every question,
// and the same counters.
func TestQueuedViewChangesRankAlike(t *testing.T) {
	topics := []string{"garden", "violin", "hiking", "pottery", "sailing", "chess", "baking", "cycling"}
	var ins []engine.Input
	for i := range 60 {
		ins = append(ins, engine.Input{Session: fmt.Sprint("s", i/4),
			Text: fmt.Sprintf("day %d: more about %s and %s", i, topics[i%len(topics)], topics[(i/3)%len(topics)])})
	}
	var qs []string
	for round := range 5 {
		for i, tp := range topics {
			qs = append(qs, fmt.Sprintf("%s day %d", tp, (round*13+i*7)%60), "day "+fmt.Sprint((round*11+i*5)%60), tp+" and "+topics[(i+round+1)%len(topics)])
		}
	}
	run := func(settle, stop bool) ([]string, engine.TierStats) {
		clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
		o := testOptions(clock)
		o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = 5, 9, 1, 3
		e, err := engine.Open(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		remember(t, e, ins...)
		if stop {
			engine.StopTierFlusher(e)
		}
		var out []string
		for _, q := range qs {
			clock.t = clock.t.Add(time.Hour)
			res, err := e.Recall(context.Background(), engine.Query{Text: q, K: 3})
			if err != nil {
				t.Fatal(err)
			}
			line := fmt.Sprint(resultsOf(res))
			for _, r := range res {
				line += fmt.Sprintf(" %d:%+v", r.Record.ID, r.Record.Header)
			}
			out = append(out, line)
			if settle {
				if err := engine.SettleTierIndexes(e); err != nil {
					t.Fatal(err)
				}
			}
		}
		return out, e.TierStats()
	}
	queued, qst := run(false, false)
	inline, is := run(true, false)
	stopped, ss := run(true, true)
	if qst.Promotions == 0 || qst.Demotions == 0 || qst.Served[1]+qst.Served[2] == 0 || qst.Served[engine.TierArchive] == 0 {
		t.Fatalf("the questions do not exercise the tiers: %+v", qst)
	}
	for i, q := range qs {
		if queued[i] != inline[i] || stopped[i] != inline[i] {
			t.Errorf("%q:\n at once  %s\n queued   %s\n no flusher %s", q, inline[i], queued[i], stopped[i])
		}
	}
	if qst != is || ss != is {
		t.Errorf("tier counters: at once %+v, queued %+v, no flusher %+v", is, qst, ss)
	}
}
