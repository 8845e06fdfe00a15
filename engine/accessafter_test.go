package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

// TestAccessAfterReplyAsInline: a recall's access (the tier manager's
// counts and moves, the views' changes) is made after its reply, on a
// goroutine holding the tier lock. Two engines fed the same records and
// questions with small tiers and a day between questions (records
// promoted and demoted by recalls, results demoting later results), one
// recalling as it does and one recalling with NoAccess and then counting
// the same results with Access, in the caller, give the same results
// (ids, tiers, scores, headers) to every question, the same header to
// every record (every third question, once the access is made; the other
// recalls start beside the last one's access) and the same counters. It
// fails when the access reads the clock after the reply (the next
// question's time).
func TestAccessAfterReplyAsInline(t *testing.T) {
	topics := []string{"garden", "violin", "hiking", "pottery", "sailing", "chess", "baking", "cycling"}
	var ins []engine.Input
	for i := range 80 {
		ins = append(ins, engine.Input{Session: fmt.Sprint("s", i/4),
			Text: fmt.Sprintf("day %d: more about %s and %s", i, topics[i%len(topics)], topics[(i/3)%len(topics)])})
	}
	var qs []string
	for round := range 6 {
		for i, tp := range topics {
			qs = append(qs, fmt.Sprintf("%s day %d", tp, (round*13+i*7)%80), "day "+fmt.Sprint((round*11+i*5)%80), tp+" and "+topics[(i+round+1)%len(topics)])
		}
	}
	open := func(clock *fakeClock) (*engine.Engine, []uint64) {
		o := testOptions(clock)
		o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = 2, 4, 1, 2
		o.FlushAccesses = 7 // flushes between recalls too
		e, err := engine.Open(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		ids := remember(t, e, ins...)
		// The counters are written by the access that makes them due,
		// not by a flusher whose commit a Get could read around.
		engine.StopTierFlusher(e)
		return e, ids
	}
	ca, cb := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}, &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	after, ids := open(ca)
	inline, _ := open(cb)
	ctx := context.Background()
	for i, q := range qs {
		ca.t, cb.t = ca.t.Add(24*time.Hour), cb.t.Add(24*time.Hour)
		ra, err := after.Recall(ctx, engine.Query{Text: q, K: 6})
		if err != nil {
			t.Fatal(err)
		}
		rb, err := inline.Recall(ctx, engine.Query{Text: q, K: 6, NoAccess: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, r := range rb {
			got = append(got, r.Record.ID)
		}
		if err := inline.Access(got...); err != nil {
			t.Fatal(err)
		}
		if a, b := withHeaders(ra), withHeaders(rb); a != b {
			t.Fatalf("%q: results after the reply %s, inline %s", q, a, b)
		}
		if i%3 != 2 {
			continue // the next recall beside this one's access
		}
		// Every record's header, once the access is made: with no
		// flusher, nothing writes meanwhile.
		_ = after.TierStats()
		for _, id := range ids {
			a, err := after.Get(id)
			if err != nil {
				t.Fatal(err)
			}
			b, err := inline.Get(id)
			if err != nil {
				t.Fatal(err)
			}
			if a.Header != b.Header {
				t.Fatalf("%q: record %d's header after the reply %+v, inline %+v", q, id, a.Header, b.Header)
			}
		}
	}
	sa, sb := after.TierStats(), inline.TierStats()
	if sa.Promotions < 100 || sa.Demotions < 100 || sa.Served[engine.TierArchive] == 0 || sa.Served[1]+sa.Served[2] == 0 {
		t.Fatalf("the questions do not exercise the tiers: %+v", sa)
	}
	if sa != sb {
		t.Errorf("tier counters: after the reply %+v, inline %+v", sa, sb)
	}
}

// withHeaders is resultsOf with each result's header.
func withHeaders(res []engine.Result) string {
	s := fmt.Sprint(resultsOf(res))
	for _, r := range res {
		s += fmt.Sprintf(" %d:%+v", r.Record.ID, r.Record.Header)
	}
	return s
}

// TestRecallsBesideTheirAccess: recalls, TierStats, Get, Access and
// Remember from several goroutines, while each recall's access is made
// after its reply, for the race detector; Close waits for the last
// access, and every recall is counted.
func TestRecallsBesideTheirAccess(t *testing.T) {
	clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	o := testOptions(clock)
	o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = 3, 6, 1, 2
	dir := t.TempDir()
	e, err := engine.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	var ins []engine.Input
	for i := range 40 {
		ins = append(ins, engine.Input{Session: fmt.Sprint("s", i/4), Text: fmt.Sprintf("note %d about the garden and the violin %d", i, i%5)})
	}
	ids := remember(t, e, ins...)
	const workers, each = 4, 15
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := e.Recall(context.Background(), engine.Query{Text: fmt.Sprintf("garden violin %d", (w+i)%5), K: 3}); err != nil {
					t.Error(err)
					return
				}
				_ = e.TierStats()
				if _, err := e.Get(ids[(w*7+i)%len(ids)]); err != nil {
					t.Error(err)
				}
				switch i % 5 {
				case 1:
					if err := e.Access(ids[i]); err != nil {
						t.Error(err)
					}
				case 3:
					if _, err := e.Remember(context.Background(), engine.Input{Session: "late", Text: fmt.Sprintf("late note %d %d on the garden", w, i)}); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if got := e.TierStats().Queries; got != workers*each {
		t.Errorf("queries counted %d, want %d", got, workers*each)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = engine.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := e.TierStats().Queries; got != workers*each {
		t.Errorf("queries stored %d, want %d", got, workers*each)
	}
}
