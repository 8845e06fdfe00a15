package engine_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/engine"
)

// TestEntityGraphLoadsOnFirstUse checks that opening a store does not
// load the entity graph, that a query which does not read it leaves it
// unloaded, and that once a query needs it, it holds every committed
// change: those made before it loaded (from the bucket) and after (kept
// up to date), in both modes and in a read-only open of a store whose
// mentions were extracted by another version.
func TestEntityGraphLoadsOnFirstUse(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mode     engine.Mode
		readOnly bool // reopen read-only after dropping the bucket's version
	}{
		{"tiered", engine.ModeTiered, false},
		{"flat", engine.ModeFlat, false},
		{"read-only, stale bucket", engine.ModeFlat, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			clock := &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
			o := testOptions(clock)
			o.Mode = tc.mode
			e, err := engine.Open(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			ids := remember(t, e,
				engine.Input{Scope: "a", Session: "s", Role: "Gina", Text: "I drove to Tampa with Melanie"},
				engine.Input{Scope: "a", Session: "s", Role: "Melanie", Text: "we went camping by the lake"},
			)
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if tc.readOnly {
				dropEntitiesVersion(t, dir)
				o.ReadOnly = true
			}
			e, err = engine.Open(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			loaded := func(want bool, when string) {
				t.Helper()
				st, err := e.Stats()
				if err != nil {
					t.Fatal(err)
				}
				if st.EntityGraphLoaded != want {
					t.Fatalf("%s: entity graph loaded %t, want %t", when, st.EntityGraphLoaded, want)
				}
			}
			loaded(false, "after open")
			var late uint64
			if !tc.readOnly {
				// Committed while the graph is not in memory.
				late = remember(t, e, engine.Input{Scope: "a", Session: "s", Role: "Gina", Text: "I read Dune in Orlando"})[0]
				loaded(false, "after a write")
			}
			recallIDs(t, e, engine.Query{Text: "when did we go camping", Scope: "a"})
			loaded(false, "after a question that asks for no thing")
			recallIDs(t, e, engine.Query{Text: "which city did Gina drive to?", Scope: "a"})
			loaded(true, "after a question asking for a thing")
			if got, want := entityKeys(e.Entities(ids[0])), []string{"tampa", "melanie"}; !reflect.DeepEqual(got, want) {
				t.Fatalf("entities of the first record %q, want %q", got, want)
			}
			if tc.readOnly {
				return
			}
			if got, want := entityKeys(e.Entities(late)), []string{"dune", "orlando"}; !reflect.DeepEqual(got, want) {
				t.Fatalf("entities of the record written before the graph loaded %q, want %q", got, want)
			}
			if err := e.Forget(context.Background(), late); err != nil {
				t.Fatal(err)
			}
			if got := e.Entities(late); got != nil {
				t.Fatalf("a record forgotten after the graph loaded keeps entities %v", got)
			}
		})
	}
}

// dropEntitiesVersion makes the store's mentions look extracted by
// another version.
func dropEntitiesVersion(t *testing.T, dir string) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, engine.DBFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Delete([]byte("entities_version"))
	}); err != nil {
		t.Fatal(err)
	}
}
