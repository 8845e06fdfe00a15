package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/teststore"
)

// fakeClock is an injected clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

func testOptions(clock *fakeClock) *engine.Options {
	o := teststore.Options()
	o.Clock = clock.Now
	o.Mode = engine.ModeTiered // the engine tests exercise the tier walk; TestModesAgreeOnSmallStore covers flat
	return o
}

// openAt opens the store in dir with the test options and clock; the
// caller closes it (tests that reopen a store).
func openAt(t *testing.T, dir string, clock *fakeClock) *engine.Engine {
	t.Helper()
	e, err := engine.Open(dir, testOptions(clock))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return e
}

// openSmallTiers opens a tiered store whose tiers hold t1 and t2 records,
// Tier 1 taking the most recent session only.
func openSmallTiers(t *testing.T, clock *fakeClock, t1, t2 int) *engine.Engine {
	t.Helper()
	o := testOptions(clock)
	o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = t1, t2, 1, -1
	e, err := engine.Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func openTest(t *testing.T, dir string) (*engine.Engine, *fakeClock) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	e, err := engine.Open(dir, testOptions(clock))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e, clock
}

// tiersOf returns the tier each of ids is stored in.
func tiersOf(t *testing.T, e *engine.Engine, ids []uint64) map[uint64]uint8 {
	t.Helper()
	out := make(map[uint64]uint8, len(ids))
	for _, id := range ids {
		r, err := e.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = r.Header.Tier
	}
	return out
}

func remember(t *testing.T, e *engine.Engine, ins ...engine.Input) []uint64 {
	t.Helper()
	ids, err := e.Remember(context.Background(), ins...)
	if err != nil {
		t.Fatalf("Remember: %v", err)
	}
	return ids
}

func recallIDs(t *testing.T, e *engine.Engine, q engine.Query) []uint64 {
	t.Helper()
	res, err := e.Recall(context.Background(), q)
	if err != nil {
		t.Fatalf("Recall(%q): %v", q.Text, err)
	}
	ids := make([]uint64, len(res))
	for i, r := range res {
		ids[i] = r.Record.ID
	}
	return ids
}

func contains(ids []uint64, id uint64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// sameHistory gives every engine of es the same history, calling check
// after the first step and after the last: 600 notes over sessions of 25
// (and over scopes "scope0".. when scopes > 0), check("first"); forget
// six, update one, 100 more notes, check("after changes").
func sameHistory(t *testing.T, es []*engine.Engine, scopes int, check func(label string)) {
	t.Helper()
	ctx := context.Background()
	step := func(name string, fn func(e *engine.Engine) error) {
		t.Helper()
		for _, e := range es {
			if err := fn(e); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	notes := func(from, n int) func(e *engine.Engine) error {
		return func(e *engine.Engine) error {
			var ins []engine.Input
			for i := from; i < from+n; i++ {
				in := engine.Input{
					Session: fmt.Sprint("s", i/25), Text: fmt.Sprintf("note %d on topic%d with item%d", i, i%11, i%17),
					Time: time.Date(2024, 1, 1, 0, i, 0, 0, time.UTC),
				}
				if scopes > 0 {
					in.Scope = fmt.Sprint("scope", i%scopes)
				}
				ins = append(ins, in)
			}
			_, err := e.RememberBatch(ctx, engine.Batch{Inputs: ins})
			return err
		}
	}
	step("remember", notes(0, 600))
	check("first")
	step("forget", func(e *engine.Engine) error { return e.Forget(ctx, 1, 2, 3, 50, 51, 300) })
	step("update", func(e *engine.Engine) error { _, err := e.Update(ctx, 100, "a new text about topic3"); return err })
	step("remember more", notes(600, 100))
	check("after changes")
}
