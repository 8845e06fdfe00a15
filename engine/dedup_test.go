package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/engine"
)

// TestRememberDeduplicates covers the identity rules: the same scope and
// normalised text, or the same scope, role and sources, is stored once,
// across calls and within one batch.
func TestRememberDeduplicates(t *testing.T) {
	tests := []struct {
		name        string
		first, then []engine.Input
		wantDup     []bool // per input of then
		wantRecords int
	}{
		{"same text", []engine.Input{{Text: "We use Postgres."}}, []engine.Input{{Text: "We use Postgres."}}, []bool{true}, 1},
		{"normalised text", []engine.Input{{Text: "We use  Postgres."}}, []engine.Input{{Text: "we USE postgres.\n"}}, []bool{true}, 1},
		{"other scope", []engine.Input{{Scope: "a", Text: "We use Postgres."}}, []engine.Input{{Scope: "b", Text: "We use Postgres."}}, []bool{false}, 2},
		{"same sources, edited text", []engine.Input{{Role: "user", Text: "draft", Sources: []string{"x:1"}}},
			[]engine.Input{{Role: "user", Text: "draft, edited", Sources: []string{"x:1"}}}, []bool{true}, 1},
		{"same sources, other role", []engine.Input{{Role: "user", Text: "a turn", Sources: []string{"x:1"}}},
			[]engine.Input{{Role: "fact", Text: "a fact from it", Sources: []string{"x:1"}}}, []bool{false}, 2},
		{"within one batch", nil, []engine.Input{{Text: "done"}, {Text: "Done"}, {Text: "other"}}, []bool{false, true, false}, 2},
		{"other text", []engine.Input{{Text: "We use Postgres."}}, []engine.Input{{Text: "We use MySQL."}}, []bool{false}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := openTest(t, t.TempDir())
			ctx := context.Background()
			first := remember(t, e, tt.first...)
			out, err := e.RememberBatch(ctx, engine.Batch{Inputs: tt.then})
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range out {
				if s.Duplicate != tt.wantDup[i] {
					t.Errorf("input %d: duplicate %v, want %v", i, s.Duplicate, tt.wantDup[i])
				}
				if s.Duplicate && !slices.Contains(append(first, ids(out[:i])...), s.ID) {
					t.Errorf("input %d: duplicate of %d, which is no earlier record", i, s.ID)
				}
			}
			if st, _ := e.Stats(); st.Records != tt.wantRecords {
				t.Errorf("%d records, want %d", st.Records, tt.wantRecords)
			}
		})
	}
}

func ids(out []engine.Stored) []uint64 {
	var r []uint64
	for _, s := range out {
		r = append(r, s.ID)
	}
	return r
}

// TestDuplicateKeepsProvenance: the same text from another turn is one
// record holding both turns' sources, and re-adding either is a no-op.
func TestDuplicateKeepsProvenance(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	a := remember(t, e, engine.Input{Role: "user", Text: "which database do we use?", Sources: []string{"cc:1"}})
	b := remember(t, e, engine.Input{Role: "user", Text: "Which database do we use?", Sources: []string{"cc:7"}})
	if a[0] != b[0] {
		t.Fatalf("ids %d and %d, want one record", a[0], b[0])
	}
	r, err := e.Get(a[0])
	if err != nil || !slices.Equal(r.Sources, []string{"cc:1", "cc:7"}) {
		t.Fatalf("sources %v (%v), want both turns", r.Sources, err)
	}
	remember(t, e, engine.Input{Role: "user", Text: "which database do we use?", Sources: []string{"cc:7"}})
	if r, _ = e.Get(a[0]); len(r.Sources) != 2 {
		t.Fatalf("sources %v after a re-add, want 2", r.Sources)
	}
}

func TestIdempotencyKey(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	ctx := context.Background()
	batch := engine.Batch{Key: "req-1", Inputs: []engine.Input{{Text: "first"}, {Text: "second"}}}
	out1, err := e.RememberBatch(ctx, batch)
	if err != nil || len(out1) != 2 || out1[0].Duplicate || out1[1].Duplicate {
		t.Fatalf("first write: %+v, %v", out1, err)
	}
	out2, err := e.RememberBatch(ctx, batch)
	if err != nil || !slices.Equal(ids(out2), ids(out1)) || !out2[0].Duplicate || !out2[1].Duplicate {
		t.Fatalf("replay: %+v, %v; want the first ids, duplicates", out2, err)
	}
	other := engine.Batch{Key: "req-1", Inputs: []engine.Input{{Text: "something else"}}}
	if _, err := e.RememberBatch(ctx, other); !errors.Is(err, engine.ErrKeyReused) {
		t.Fatalf("key reused for another write: %v, want ErrKeyReused", err)
	}
	if _, err := e.RememberBatch(ctx, engine.Batch{Key: string(make([]byte, engine.MaxKeyBytes+1)), Inputs: batch.Inputs}); err == nil {
		t.Fatal("over-long key accepted")
	}
	// An update moves the key to the new version; a replay names it.
	newID, err := e.Update(ctx, out1[0].ID, "first, corrected")
	if err != nil {
		t.Fatal(err)
	}
	out3, err := e.RememberBatch(ctx, batch)
	if err != nil || out3[0].ID != newID || out3[1].ID != out1[1].ID {
		t.Fatalf("replay after update: %+v, %v; want [%d %d]", out3, err, newID, out1[1].ID)
	}
	if st, _ := e.Stats(); st.Records != 2 {
		t.Fatalf("%d records, want 2", st.Records)
	}
}

// TestForgetFreesIdentity: a forgotten record's text, sources and batch
// key can be written again (delete means gone, also from the keys).
func TestForgetFreesIdentity(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	ctx := context.Background()
	in := engine.Input{Role: "user", Text: "my bank pin is 4321", Sources: []string{"cc:9"}}
	out, err := e.RememberBatch(ctx, engine.Batch{Key: "k", Inputs: []engine.Input{in}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Forget(ctx, out[0].ID); err != nil {
		t.Fatal(err)
	}
	again, err := e.RememberBatch(ctx, engine.Batch{Key: "k", Inputs: []engine.Input{in}})
	if err != nil || again[0].Duplicate || again[0].ID == out[0].ID {
		t.Fatalf("after forget: %+v, %v; want a new record", again, err)
	}
	// Update: the old text is free again, the new one is taken.
	newID, err := e.Update(ctx, again[0].ID, "my bank pin changed")
	if err != nil {
		t.Fatal(err)
	}
	got := remember(t, e, engine.Input{Text: "My bank pin changed"}, engine.Input{Text: "my bank pin is 4321"})
	if got[0] != newID || got[1] == again[0].ID || got[1] == newID {
		t.Fatalf("after update got %v; want [%d, a new id]", got, newID)
	}
}

// TestDedupKeysBuiltForOldStores: a store written before de-duplication
// (no identity keys) gets them when opened.
func TestDedupKeysBuiltForOldStores(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	e := openAt(t, dir, clock)
	first := remember(t, e, engine.Input{Text: "an old memory"})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(dir, engine.DBFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return errors.Join(tx.DeleteBucket([]byte("dedup")), tx.DeleteBucket([]byte("dedupids")))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	e = openAt(t, dir, clock)
	defer e.Close()
	if got := remember(t, e, engine.Input{Text: "An old memory"}); got[0] != first[0] {
		t.Fatalf("re-added old memory got id %d, want %d", got[0], first[0])
	}
}

// TestDerivedRecordsAreNotContext: a fact distilled from a turn is
// indexed alone and is not the context of the turn after it, so a query
// matching only the fact does not lift its neighbours (issue 12: "File:
// ... config/db.toml" ranked first for "database decision" through the
// decision fact before it).
func TestDerivedRecordsAreNotContext(t *testing.T) {
	o := testOptions(&fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)})
	o.Mode = engine.ModeFlat
	o.NoVector = true
	o.Stages = "-prf" // exact lexical matches only: feedback words would add neighbours by design
	e, err := engine.Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ids := remember(t, e,
		engine.Input{Session: "s", Role: "user", Text: "which zebrafish do we keep?"},
		engine.Input{Session: "s", Role: "fact", Text: "Decision: quokka tanks only"},
		engine.Input{Session: "s", Role: "fact", Text: "File: tanks.toml"},
		engine.Input{Session: "s", Role: "assistant", Text: "the tanks are cleaned weekly"},
	)
	if got := recallIDs(t, e, engine.Query{Text: "quokka"}); !slices.Equal(got, ids[1:2]) {
		t.Errorf("quokka matched %v, want only the fact %d", got, ids[1])
	}
	// The turn after the facts still has the turn before them as context.
	if got := recallIDs(t, e, engine.Query{Text: "zebrafish"}); !slices.Equal(got, []uint64{ids[3], ids[0]}) && !slices.Equal(got, []uint64{ids[0], ids[3]}) {
		t.Errorf("zebrafish matched %v, want the question %d and the turn after the facts %d", got, ids[0], ids[3])
	}
}
