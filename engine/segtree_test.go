package engine_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/engine"
)

// TestSegTreePersistedRebuiltForgotten checks that the segment tree is
// kept with the records, survives a reopen, is rebuilt identically from
// the records when its layout mark is lost, and holds no forgotten text.
func TestSegTreePersistedRebuiltForgotten(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	e := openAt(t, dir, clock)
	var ins []engine.Input
	for i := range 40 {
		ins = append(ins, engine.Input{Scope: "u", Session: "s", Text: "we talked about the garden and the roses " + strings.Repeat("x", i%5)})
	}
	ins = append(ins, engine.Input{Scope: "u", Session: "s", Text: "my locker code is walrusquill"})
	ids := remember(t, e, ins...)
	before, err := e.SegmentSummaries()
	if err != nil || len(before) == 0 {
		t.Fatalf("summaries %v, %v: want a tree", before, err)
	}
	e.Close()

	// Reopened: the same tree.
	e = openAt(t, dir, clock)
	again, err := e.SegmentSummaries()
	if err != nil || !maps.Equal(before, again) {
		t.Fatalf("after reopen: %v (%v), want %v", again, err, before)
	}
	e.Close()

	// Layout mark lost: rebuilt from bbolt, the same summaries.
	db, err := bolt.Open(dir+"/"+engine.DBFile, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket([]byte("segtree")); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Delete([]byte("segtree_layout"))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	e = openAt(t, dir, clock)
	defer e.Close()
	rebuilt, err := e.SegmentSummaries()
	if err != nil || len(rebuilt) != len(before) {
		t.Fatalf("rebuilt %d segments (%v), want %d", len(rebuilt), err, len(before))
	}

	// Forget the secret: no summary holds it.
	if err := e.Forget(context.Background(), ids[len(ids)-1]); err != nil {
		t.Fatal(err)
	}
	after, err := e.SegmentSummaries()
	if err != nil {
		t.Fatal(err)
	}
	for id, s := range after {
		if strings.Contains(s, "walrusquill") {
			t.Errorf("segment %d keeps forgotten text %q", id, s)
		}
	}
	// Forget everything: no segment left.
	if err := e.Forget(context.Background(), ids[:len(ids)-1]...); err != nil {
		t.Fatal(err)
	}
	if left, _ := e.SegmentSummaries(); len(left) != 0 {
		t.Errorf("%d segments left after forgetting every record", len(left))
	}
}

// TestSegTreeStageRuns checks the segtree stage end to end: with it on,
// recall still answers and returns only live records.
func TestSegTreeStageRuns(t *testing.T) {
	for _, mode := range []engine.Mode{engine.ModeFlat, engine.ModeTiered} {
		clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
		o := testOptions(clock)
		o.Mode, o.Stages = mode, "+segtree"
		e, err := engine.Open(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		ids := remember(t, e,
			engine.Input{Session: "a", Text: "the cat is called Miso"},
			engine.Input{Session: "a", Text: "Miso sleeps on the sofa"},
			engine.Input{Session: "b", Text: "the train to Lisbon leaves at nine"},
		)
		if err := e.Forget(context.Background(), ids[1]); err != nil {
			t.Fatal(err)
		}
		got := recallIDs(t, e, engine.Query{Text: "what is the cat called", K: 3})
		if len(got) == 0 || got[0] != ids[0] || contains(got, ids[1]) {
			t.Errorf("%s: recall %v, want %d first and not %d", mode, got, ids[0], ids[1])
		}
		e.Close()
	}
}
