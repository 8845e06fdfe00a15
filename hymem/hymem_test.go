package hymem_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/hymem"
	"github.com/hmo-dev/hmo/internal/teststore"
)

// verdict is a Sufficiency double: it answers the same for every call
// and counts the calls by tier.
type verdict struct {
	ok    bool
	calls map[uint8]int
}

func (v *verdict) Sufficient(_ context.Context, _ *engine.Query, tier uint8, _ []engine.Result) (bool, error) {
	v.calls[tier]++
	return v.ok, nil
}

func store(t *testing.T) *engine.Engine {
	t.Helper()
	e := teststore.Open(t)
	var ins []engine.Input
	for i := range 30 {
		topic := []string{"the garden and its roses", "a trip to the mountains", "the new job at the bakery"}[i/10]
		ins = append(ins, engine.Input{Session: fmt.Sprintf("s%d", i/10), Role: "user", Text: fmt.Sprintf("turn %d on %s", i, topic)})
	}
	if _, err := e.Remember(context.Background(), ins...); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestPaths(t *testing.T) {
	e := store(t)
	cases := []struct {
		name       string
		sufficient bool
		o          hymem.Options
		path       hymem.Path
		rounds     int
	}{
		{"light when sufficient", true, hymem.Options{}, hymem.Light, 0},
		{"deep when not, capped", false, hymem.Options{MaxRounds: 2, Batch: 1}, hymem.Deep, 2},
		{"one round", false, hymem.Options{MaxRounds: 1}, hymem.Deep, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := &verdict{ok: tc.sufficient, calls: map[uint8]int{}}
			res, err := hymem.Retrieve(context.Background(), e, v, engine.Query{Text: "roses in the garden"}, &tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Path != tc.path || res.Rounds != tc.rounds {
				t.Errorf("path %s rounds %d, want %s %d", res.Path, res.Rounds, tc.path, tc.rounds)
			}
			if v.calls[1] != 1 || v.calls[3] != tc.rounds {
				t.Errorf("sufficiency calls %v: want one light check and one per deep round", v.calls)
			}
			if len(res.Units) == 0 || !strings.Contains(res.Units[0].Summary, "garden") {
				t.Fatalf("best unit %+v, want the garden's", res.Units)
			}
			text, ids := hymem.Render(res, e, 4000)
			if len(text) > 4000 || len(ids) == 0 {
				t.Errorf("render: %d bytes, ids %v", len(text), ids)
			}
			if tc.path == hymem.Deep {
				// The deep path shows the raw turns of the units.
				if n := len(res.Units[0].Records); n != len(res.Units[0].Turns) || !strings.Contains(text, res.Units[0].Records[0].Text) {
					t.Errorf("deep unit has %d records of %d turns", n, len(res.Units[0].Turns))
				}
			} else if !strings.Contains(text, "[event ") {
				t.Errorf("light block %q has no event lines", text)
			}
			if small, _ := hymem.Render(res, e, 10); small != "" {
				t.Errorf("a 10-byte budget rendered %q", small)
			}
		})
	}
	if _, err := hymem.Retrieve(context.Background(), e, &verdict{calls: map[uint8]int{}}, engine.Query{Text: "x"}, &hymem.Options{K: -1}); err == nil {
		t.Error("K -1 accepted")
	}
}

// TestForgottenTurnLeavesUnits: after Forget no unit shows the turn or a
// summary drawn from it.
func TestForgottenTurnLeavesUnits(t *testing.T) {
	e := store(t)
	res, err := e.Recall(context.Background(), engine.Query{Text: "turn 3 on the garden", K: 1})
	if err != nil || len(res) == 0 {
		t.Fatal(res, err)
	}
	gone := res[0].Record
	if err := e.Forget(context.Background(), gone.ID); err != nil {
		t.Fatal(err)
	}
	for _, ok := range []bool{true, false} {
		r, err := hymem.Retrieve(context.Background(), e, &verdict{ok: ok, calls: map[uint8]int{}}, engine.Query{Text: "garden roses"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		text, ids := hymem.Render(r, e, 1<<20)
		if strings.Contains(text, gone.Text) {
			t.Errorf("path %s shows the forgotten turn %q", r.Path, gone.Text)
		}
		for _, id := range ids {
			if id == gone.ID {
				t.Errorf("path %s cites the forgotten record", r.Path)
			}
		}
	}
}
