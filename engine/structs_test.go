package engine_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/testembed"
)

// structureBuckets are the buckets of xMemory's hierarchy and HyMem's
// event units.
var structureBuckets = []string{"xmemory", "hymem"}

// dumpBuckets reads every key and value of the named buckets of the
// closed store in dir.
func dumpBuckets(t *testing.T, dir string, names ...string) map[string]string {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, engine.DBFile), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]string{}
	db.View(func(tx *bolt.Tx) error {
		for _, name := range names {
			b := tx.Bucket([]byte(name))
			if b == nil {
				continue
			}
			b.ForEach(func(k, v []byte) error {
				out[name+"/"+string(k)] = string(v)
				return nil
			})
		}
		return nil
	})
	return out
}

// setMeta changes (nil: deletes) meta keys of the closed store in dir.
func setMeta(t *testing.T, dir string, kv map[string][]byte) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, engine.DBFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		m := tx.Bucket([]byte("meta"))
		for k, v := range kv {
			var err error
			if v == nil {
				err = m.Delete([]byte(k))
			} else {
				err = m.Put([]byte(k), v)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// manyNotes are n notes on six topics, in sessions of 12.
func manyNotes(n int) []engine.Input {
	topics := []string{"my garden roses and tulips bloom", "the database migration to postgres", "our hiking trip in the alps",
		"my sister's wedding in lisbon", "the violin lessons on tuesday", "the kitchen renovation budget"}
	var ins []engine.Input
	for i := range n {
		ins = append(ins, engine.Input{Scope: "u", Session: fmt.Sprintf("s%d", i/12),
			Text: fmt.Sprintf("Hey! Note %d about %s and item %c.", i, topics[(i/3)%len(topics)], 'a'+i%26)})
	}
	return ins
}

// TestStructuresRebuiltIdentically: the structures kept up to date as
// records arrive, in batches of any size, are byte for byte those a
// rebuild from the records writes when the store opens with them missing
// or from an older version.
func TestStructuresRebuiltIdentically(t *testing.T) {
	for _, tc := range []struct {
		name string
		meta map[string][]byte
	}{
		{"missing", map[string][]byte{"xmemory_version": nil, "hymem_version": nil}},
		{"older version", map[string][]byte{"xmemory_version": []byte("xmemory/0"), "hymem_version": []byte("hymem/0")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
			e := openAt(t, dir, clock)
			ins := manyNotes(200)
			for i, size := 0, 1; i < len(ins); i, size = i+size, size%13+1 {
				remember(t, e, ins[i:min(len(ins), i+size)]...)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			kept := dumpBuckets(t, dir, structureBuckets...)
			var facts, themes, units int
			for k := range kept {
				switch {
				case strings.HasPrefix(k, "xmemory/f"):
					facts++
				case strings.HasPrefix(k, "xmemory/t"):
					themes++
				case strings.HasPrefix(k, "hymem/u"):
					units++
				}
			}
			if facts != 200 || themes < 10 || units < 5 {
				t.Fatalf("precondition: the store keeps %d facts, %d themes, %d units; want 200, >= 10, >= 5", facts, themes, units)
			}
			setMeta(t, dir, tc.meta)
			e = openAt(t, dir, clock) // rebuilds
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			rebuilt := dumpBuckets(t, dir, structureBuckets...)
			if diff := diffKeys(kept, rebuilt); len(diff) > 0 {
				t.Errorf("the rebuilt structures differ from the kept ones at %d keys: %q", len(diff), diff[:min(len(diff), 8)])
			}
		})
	}
}

// TestThemesOfLargeBatches: the themes of a batch are added beside its
// transaction and written once per batch; what is kept is byte for byte
// what a rebuild (one record at a time) writes, with two scopes in one
// batch, a batch that takes a scope past Options.ThemesMaxRecords (whose
// themes are dropped at that record) and batches of scopes past it
// (only their counters change).
func TestThemesOfLargeBatches(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int
		sizes []int // batch sizes, repeated to the end
	}{
		{"no limit, one batch", -1, []int{400}},
		{"no limit, batches of 50 and 130", -1, []int{50, 130}},
		{"limit crossed inside a batch", 150, []int{100}},
		{"limit crossed at a batch's last record", 150, []int{75}},
		{"limit crossed by the first batch", 20, []int{400}},
		{"batches of scopes past the limit only", 20, []int{50}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
			o := testOptions(clock)
			o.ThemesMaxRecords = tc.limit
			open := func() *engine.Engine {
				e, err := engine.Open(dir, o)
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
			e := open()
			// Scope u gets 3 records in 4, scope v the rest, interleaved.
			ins := manyNotes(400)
			for i := range ins {
				if i%4 == 3 {
					ins[i].Scope = "v"
				}
			}
			for i, k := 0, 0; i < len(ins); k++ {
				size := tc.sizes[k%len(tc.sizes)]
				remember(t, e, ins[i:min(len(ins), i+size)]...)
				i += size
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			kept := dumpBuckets(t, dir, "xmemory")
			themes := 0
			for k := range kept {
				if strings.HasPrefix(k, "xmemory/t") {
					themes++
				}
			}
			if want := tc.limit < 0 || tc.limit >= 100; (themes > 0) != want {
				t.Fatalf("precondition: %d themes kept, want themes: %v", themes, want)
			}
			setMeta(t, dir, map[string][]byte{"xmemory_version": nil})
			if err := open().Close(); err != nil { // rebuilds
				t.Fatal(err)
			}
			rebuilt := dumpBuckets(t, dir, "xmemory")
			if diff := diffKeys(kept, rebuilt); len(diff) > 0 {
				t.Errorf("the rebuilt themes differ from the kept ones at %d keys: %q", len(diff), diff[:min(len(diff), 8)])
			}
		})
	}
}

// TestForgetLeavesEveryStructure: a forgotten record and the old version
// of an updated one leave every structure at once: no fact, theme, unit
// or link names them and no summary holds their words; the structures
// loaded from bbolt on the next open agree with those kept in memory.
func TestForgetLeavesEveryStructure(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	e := openAt(t, dir, clock)
	ins := manyNotes(60)
	// Distinctive texts, alone on their topic, so that each is a theme's
	// and a unit's summary.
	ins = append(ins,
		engine.Input{Scope: "u", Session: "x", Text: "the quagmirefox password is kept under the quagmirefox mat"},
		engine.Input{Scope: "u", Session: "x", Text: "the quagmirefox alarm code is another quagmirefox secret"},
		engine.Input{Scope: "u", Session: "y", Text: "the wombatlantern plan for the wombatlantern trip"})
	ids := remember(t, e, ins...)
	gone := ids[len(ids)-3 : len(ids)-1]
	upd := ids[len(ids)-1]
	holds := func(word string) []string {
		var out []string
		themes, err := e.ThemeSummaries("u")
		if err != nil {
			t.Fatal(err)
		}
		for id, th := range themes {
			if strings.Contains(th.Summary, word) {
				out = append(out, fmt.Sprintf("theme %d summary", id))
			}
		}
		units, err := e.EventUnits()
		if err != nil {
			t.Fatal(err)
		}
		for id, u := range units {
			if strings.Contains(u.Summary, word) {
				out = append(out, fmt.Sprintf("unit %d summary", id))
			}
		}
		return out
	}
	for _, w := range []string{"quagmirefox", "wombatlantern"} {
		if got := holds(w); len(got) < 2 {
			t.Fatalf("precondition: %q is in %v, want a theme's and a unit's summary", w, got)
		}
	}
	if err := e.Forget(context.Background(), gone...); err != nil {
		t.Fatal(err)
	}
	newID, err := e.Update(context.Background(), upd, "the plan changed: we stay home")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"quagmirefox", "wombatlantern"} {
		if got := holds(w); len(got) != 0 {
			t.Errorf("after forget/update, %q is still in %v", w, got)
		}
	}
	dead := append(slices.Clone(gone), upd)
	themes, _ := e.ThemeSummaries("u")
	for id, th := range themes {
		for _, f := range th.Facts {
			if slices.Contains(dead, f) || f == 0 {
				t.Errorf("theme %d still holds record %d", id, f)
			}
		}
	}
	units, _ := e.EventUnits()
	for id, u := range units {
		for _, r := range u.Turns {
			if slices.Contains(dead, r) {
				t.Errorf("unit %d still holds record %d", id, r)
			}
		}
	}
	for _, id := range dead {
		if seg, _, _, _ := e.Episode(id); seg != 0 {
			t.Errorf("record %d still has unit %d", id, seg)
		}
	}
	live := append(slices.Clone(ids[:len(ids)-3]), newID)
	before, _, err := e.Themes("u", append(slices.Clone(dead), live...))
	if err != nil {
		t.Fatal(err)
	}
	for i := range dead {
		if before[i] != 0 {
			t.Errorf("record %d keeps theme %d", dead[i], before[i])
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if got := dumpBuckets(t, dir, structureBuckets...); func() bool {
		for _, v := range got {
			if strings.Contains(v, "quagmirefox") || strings.Contains(v, "wombatlantern") {
				return true
			}
		}
		return false
	}() {
		t.Error("a structure bucket still holds a forgotten word")
	}
	e = openAt(t, dir, clock)
	defer e.Close()
	after, _, err := e.Themes("u", append(slices.Clone(dead), live...))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, after) {
		t.Errorf("themes loaded from bbolt differ from those kept in memory:\n%v\n%v", before, after)
	}
	for i, th := range after[len(dead):] {
		if th == 0 {
			t.Errorf("live record %d has no theme", live[i])
		}
	}
}

// cancellingEmbedder cancels its caller's context on the call numbered fail,
// after returning its vectors: the transaction fails after the
// structures have changed in memory.
type cancellingEmbedder struct {
	engine.Embedder
	calls  int
	fail   int
	cancel context.CancelFunc
}

func (c *cancellingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.calls++
	if c.calls == c.fail {
		c.cancel()
	}
	return c.Embedder.Embed(ctx, texts)
}

// TestStructuresFollowARolledBackWrite: a write that fails after the
// structures changed in memory leaves them as bbolt has them: the next
// writes and a rebuild agree.
func TestStructuresFollowARolledBackWrite(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	o := testOptions(clock)
	ctx, cancel := context.WithCancel(context.Background())
	emb := &cancellingEmbedder{Embedder: o.Embedder, fail: 3, cancel: cancel}
	o.Embedder = emb
	e, err := engine.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	ins := manyNotes(90)
	var ids []uint64
	for i := 0; i < 90; i += 30 {
		got, err := e.Remember(ctx, ins[i:i+30]...)
		if emb.calls == emb.fail {
			if err == nil {
				t.Fatal("precondition: the cancelled write succeeded")
			}
			ctx = context.Background()
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got...)
	}
	ids = append(ids, remember(t, e, ins[60:90]...)...)
	th, _, err := e.Themes("u", ids)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(th, 0) {
		t.Errorf("records without a theme after a rolled-back write: %v", th)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	kept := dumpBuckets(t, dir, structureBuckets...)
	setMeta(t, dir, map[string][]byte{"xmemory_version": nil, "hymem_version": nil})
	e = openAt(t, dir, clock)
	e.Close()
	if rebuilt := dumpBuckets(t, dir, structureBuckets...); !maps.Equal(kept, rebuilt) {
		t.Error("after a rolled-back write the kept structures differ from a rebuild")
	}
}

// TestStructuresAfterReindex: after a reindex to another embedder the
// stored structures are those a rebuild in the new space writes.
func TestStructuresAfterReindex(t *testing.T) {
	dir := t.TempDir()
	e, err := openFlat(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	remember(t, e, manyNotes(100)...)
	target := testembed.Hash{ID: "test:hash/32", Size: 32}
	if err := e.Reindex(context.Background(), target, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	kept := dumpBuckets(t, dir, structureBuckets...)
	setMeta(t, dir, map[string][]byte{"xmemory_version": nil, "hymem_version": nil})
	e, err = openFlat(t, dir, target)
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	rebuilt := dumpBuckets(t, dir, structureBuckets...)
	if len(rebuilt) == 0 || !maps.Equal(kept, rebuilt) {
		t.Errorf("after a reindex the kept structures (%d keys) differ from a rebuild (%d keys)", len(kept), len(rebuilt))
	}
}

// diffKeys returns, sorted, the keys whose values differ between a and b
// or that only one of them holds.
func diffKeys(a, b map[string]string) []string {
	var diff []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			diff = append(diff, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diff = append(diff, k)
		}
	}
	slices.Sort(diff)
	return diff
}
