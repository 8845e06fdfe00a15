package engine_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/entity"
)

func entityKeys(ms []entity.Mention) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Key)
	}
	return out
}

// TestEntitiesPersistAndRebuild checks that the entity graph is written
// with the records, survives a reopen, is re-extracted when its bucket is
// lost, and follows Forget and Update.
func TestEntitiesPersistAndRebuild(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	e := openAt(t, dir, clock)
	ids := remember(t, e,
		engine.Input{Scope: "a", Session: "s", Text: "I drove to Tampa with Gina yesterday"},
		engine.Input{Scope: "a", Session: "s", Text: "Tampa was sunny"},
		engine.Input{Scope: "a", Session: "s", Text: "no names at all"},
	)
	want := []string{"tampa", "gina", "date:2024-04-30"}
	if got := entityKeys(e.Entities(ids[0])); !reflect.DeepEqual(got, want) {
		t.Fatalf("entities of the first record %q, want %q", got, want)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openAt(t, dir, clock)
	if got := entityKeys(e.Entities(ids[0])); !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopen %q, want %q", got, want)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// Lose the bucket and the version mark: the graph is rebuilt from the records.
	db, err := bolt.Open(filepath.Join(dir, engine.DBFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket([]byte("entities")); err != nil {
			return err
		}
		if _, err := tx.CreateBucket([]byte("entities")); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Delete([]byte("entities_version"))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	e = openAt(t, dir, clock)
	defer e.Close()
	if got := entityKeys(e.Entities(ids[0])); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the rebuild %q, want %q", got, want)
	}
	if err := e.Forget(context.Background(), ids[0]); err != nil {
		t.Fatal(err)
	}
	if got := e.Entities(ids[0]); got != nil {
		t.Fatalf("a forgotten record keeps entities %v", got)
	}
	nid, err := e.Update(context.Background(), ids[1], "Orlando was sunny")
	if err != nil {
		t.Fatal(err)
	}
	if got := entityKeys(e.Entities(nid)); !reflect.DeepEqual(got, []string{"orlando"}) {
		t.Fatalf("updated record's entities %q, want [orlando]", got)
	}
	if got := e.Entities(ids[1]); got != nil {
		t.Fatalf("the superseded version keeps entities %v", got)
	}
}

// TestEntitiesRolledBack checks that a write that fails leaves nothing in
// the graph, not even for the next write that reuses its id.
func TestEntitiesRolledBack(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Remember(ctx, engine.Input{Text: "I met Melanie"}, engine.Input{Text: "I met Zebraquokka"}); err == nil {
		t.Fatal("Remember with a cancelled context succeeded")
	}
	ids := remember(t, e, engine.Input{Text: "I met Melanie"})
	if got := entityKeys(e.Entities(ids[0])); !reflect.DeepEqual(got, []string{"melanie"}) {
		t.Fatalf("entities %q, want only the committed record's [melanie]", got)
	}
	if got := e.Entities(ids[0] + 1); got != nil {
		t.Fatalf("the rolled-back record %d has entities %v", ids[0]+1, got)
	}
}

// TestTreeFollowsTheStore checks the temporal-semantic tree: built as
// records arrive, the same after a reopen (rebuilt from bbolt), and
// without a forgotten record's text in any summary.
func TestTreeFollowsTheStore(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	e := openAt(t, dir, clock)
	var ins []engine.Input
	for i, s := range []string{"we went camping by the lake", "camping by the lake again", "my pin is zebraquokka", "pottery class with the kids"} {
		ins = append(ins, engine.Input{Scope: "a", Session: "s", Text: s, Time: clock.t.AddDate(0, 0, i)})
	}
	ids := remember(t, e, ins...)
	summaries := func(e *engine.Engine) []string {
		nodes, err := e.HTreeNodes("a", 500)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range nodes {
			out = append(out, n.Summary)
		}
		return out
	}
	before := summaries(e)
	if len(before) < 3 || !strings.Contains(strings.Join(before, "|"), "zebraquokka") {
		t.Fatalf("tree nodes %q: want a node per level at least, one summarising the secret", before)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openAt(t, dir, clock)
	defer e.Close()
	if got := summaries(e); !reflect.DeepEqual(got, before) {
		t.Fatalf("after reopen %q, want %q", got, before)
	}
	if err := e.Forget(context.Background(), ids[2]); err != nil {
		t.Fatal(err)
	}
	for _, s := range summaries(e) {
		if strings.Contains(s, "zebraquokka") {
			t.Fatalf("a summary keeps forgotten text: %q", s)
		}
	}
}

// TestTreeBuiltOnFirstUse checks the tree of a store opened with a
// pipeline that does not read it: built when first asked for, it holds
// what was remembered and forgets what was forgotten before that, and is
// the tree a fresh open builds.
func TestTreeBuiltOnFirstUse(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	in := func(i int, s string) engine.Input {
		return engine.Input{Scope: "a", Session: "s", Text: s, Time: clock.t.AddDate(0, 0, i)}
	}
	e := openAt(t, dir, clock)
	first := remember(t, e, in(0, "we went camping by the lake"), in(1, "my pin is zebraquokka"))
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openAt(t, dir, clock)
	remember(t, e, in(2, "pottery class with the kids"), in(3, "the kids loved the pottery wheel"))
	if err := e.Forget(context.Background(), first[1]); err != nil {
		t.Fatal(err)
	}
	joined := func(e *engine.Engine) string {
		nodes, err := e.HTreeNodes("a", 500)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range nodes {
			out = append(out, n.Summary)
		}
		return strings.Join(out, "|")
	}
	got := joined(e)
	for _, want := range []string{"camping", "pottery"} {
		if !strings.Contains(got, want) {
			t.Errorf("tree summaries %q lack %q", got, want)
		}
	}
	if strings.Contains(got, "zebraquokka") {
		t.Errorf("tree summaries %q keep forgotten text", got)
	}
	remember(t, e, in(4, "a new zebraquokka-free note about sailing"))
	got = joined(e)
	if !strings.Contains(got, "sailing") {
		t.Errorf("tree summaries %q lack a record remembered after the build", got)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openAt(t, dir, clock)
	defer e.Close()
	if fresh := joined(e); fresh != got {
		t.Errorf("built on first use %q, a fresh build %q", got, fresh)
	}
}
