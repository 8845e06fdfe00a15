package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/internal/testembed"
	"github.com/hmo-dev/hmo/retrieve"
	"github.com/hmo-dev/hmo/tiers"
)

// TestAccessPromotesTheStoredRecord: an archive result promoted into a
// view by its access is taken from the result when nothing was committed
// since the results were read, and read again when something was: a
// duplicate's sources merged into the record in between must be in the
// view (the result read before the merge lacks them). Each case starts
// from a store whose tiers are full, the result in the archive.
func TestAccessPromotesTheStoredRecord(t *testing.T) {
	for _, tc := range []struct {
		name        string
		writeFirst  bool     // merge a duplicate's sources after the results are read
		wantSources []string // the view's record's sources
	}{
		{"no commit since the results", false, []string{"D1:1", "mark"}},
		{"a commit since the results", true, []string{"D1:1", "D9:9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, target := tieredArchiveRecord(t)
			res, readTx, err := e.results([]retrieve.Candidate{{ID: target}}, 1)
			if err != nil || len(res) != 1 {
				t.Fatalf("results: %v, %d", err, len(res))
			}
			// A mark only the result holds: it reaches the view only if
			// the result's record is the one promoted.
			res[0].Record.Sources = append(res[0].Record.Sources, "mark")
			if tc.writeFirst {
				// Same text, same scope: a duplicate, whose source is
				// merged into the stored record in place.
				dup := Input{Scope: "s", Session: "old", Role: "user", Text: res[0].Record.Text, Sources: []string{"D9:9"}}
				ids, err := e.Remember(context.Background(), dup)
				if err != nil || len(ids) != 1 || ids[0] != target {
					t.Fatalf("duplicate: %v %v, want record %d", ids, err, target)
				}
				if tier := e.tiers.mgr.Tier(target); tier != tiers.Tier3 {
					t.Fatalf("record %d in tier %d after the duplicate, want the archive", target, tier)
				}
			}
			e.tiers.mu.Lock()
			err = e.access(res, readTx, e.opts.Clock())
			tier := e.tiers.mgr.Tier(target)
			var got []string
			if r, ok := e.tiers.viewRecord(tier, target); ok {
				got = slices.Clone(r.Sources)
			}
			e.tiers.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			if !activeTier(tier) {
				t.Fatalf("record %d in tier %d after its access, want it promoted", target, tier)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.wantSources) {
				t.Errorf("the view's record has sources %q, want %q", got, tc.wantSources)
			}
		})
	}
}

// tieredArchiveRecord opens a tiered engine whose tiers hold a few
// records and returns it with the id of an old record in the archive.
func tieredArchiveRecord(t *testing.T) (*Engine, uint64) {
	t.Helper()
	o := &Options{
		Mode:             ModeTiered,
		Embedder:         testembed.Hash{ID: "test:hash/16", Size: 16},
		OpenVectorIndex:  func(_ string, dims int) (VectorIndex, error) { return newMemVectors(dims), nil },
		OpenTextIndex:    func(string) (TextIndex, error) { return &mapText{docs: map[uint64]TextDoc{}}, nil },
		NewTierTextIndex: func() (TextIndex, error) { return &mapText{docs: map[uint64]TextDoc{}}, nil },
		Tiers:            tiers.Options{Tier1Cap: 2, Tier2Cap: 4, RecentSessions: 1},
	}
	e, err := Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ctx := context.Background()
	old, err := e.Remember(ctx, Input{Scope: "s", Session: "old", Role: "user", Text: "the lake house has a green door", Sources: []string{"D1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	for s := range 12 {
		var in []Input
		for i := range 5 {
			in = append(in, Input{Scope: "s", Session: fmt.Sprint("new", s), Role: "user", Text: fmt.Sprintf("session %d note %d about the weather", s, i)})
		}
		if _, err := e.Remember(ctx, in...); err != nil {
			t.Fatal(err)
		}
	}
	if tier := e.tiers.mgr.Tier(old[0]); tier != tiers.Tier3 {
		t.Fatalf("the old record is in tier %d, want the archive", tier)
	}
	return e, old[0]
}
