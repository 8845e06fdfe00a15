package fts

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	index "github.com/blevesearch/bleve_index_api"
	"github.com/hmo-dev/hmo/engine"
)

// TestApplyLooksUpOnlyIndexedIDs: Apply reads the stored lengths of the
// documents it replaces or deletes, and not of those whose id is above
// every id the index holds (keyMaxID, kept across a reopen); an index
// written without the key (by bleve, older builds) looks every document
// up. The totals are those of an index given the final documents at once.
func TestApplyLooksUpOnlyIndexedIDs(t *testing.T) {
	doc := func(id int, v string) engine.TextDoc {
		return engine.TextDoc{ID: uint64(id), Text: fmt.Sprintf("note %d %s about the garden", id, v), Context: v}
	}
	docs := func(from, to int, v string) []engine.TextDoc {
		var out []engine.TextDoc
		for id := from; id <= to; id++ {
			out = append(out, doc(id, v))
		}
		return out
	}
	dir := filepath.Join(t.TempDir(), "x")
	x, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		docs    []engine.TextDoc
		deletes []uint64
		lookups uint64
	}{
		{"new documents", docs(1, 50, "a"), nil, 0},
		{"11 replaced, 10 new", docs(40, 60, "b b"), nil, 11},
		{"a delete, an absent delete above", nil, []uint64{5, 99}, 1},
		{"replaced twice in one batch", append(docs(61, 62, "c"), doc(61, "d d d")), nil, 0},
	}
	wm := uint64(0)
	apply := func(x *Index, name string, d []engine.TextDoc, del []uint64, want uint64) {
		t.Helper()
		before := x.lookups.Load()
		wm++
		if err := x.Apply(d, del, wm); err != nil {
			t.Fatal(err)
		}
		if got := x.lookups.Load() - before; got != want {
			t.Errorf("%s: %d lookups, want %d", name, got, want)
		}
	}
	for _, s := range steps {
		apply(x, s.name, s.docs, s.deletes, s.lookups)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if x, err = Open(dir, nil); err != nil {
		t.Fatal(err)
	}
	apply(x, "after reopening, a new document", docs(63, 63, "e"), nil, 0)
	apply(x, "after reopening, a replaced one", docs(30, 30, "f"), nil, 1)

	// A build that does not keep the bound applies a batch (here only
	// its watermark): the bound left behind is not trusted after that.
	b := index.NewBatch()
	var raw [8]byte
	binary.BigEndian.PutUint64(raw[:], wm+1)
	b.SetInternal(keyWatermark, raw[:])
	if err := x.s.Batch(b); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if x, err = Open(dir, nil); err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	wm++
	apply(x, "after another build's batch, a new document", docs(64, 64, "g"), nil, 1)

	// The final documents, given at once to a new index.
	final := map[uint64]engine.TextDoc{}
	for _, s := range steps {
		for _, d := range s.docs {
			final[d.ID] = d
		}
		for _, id := range s.deletes {
			delete(final, id)
		}
	}
	final[63], final[30], final[64] = doc(63, "e"), doc(30, "f"), doc(64, "g")
	var all []engine.TextDoc
	for _, d := range final {
		all = append(all, d)
	}
	ref, err := Open(filepath.Join(t.TempDir(), "ref"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if err := ref.Apply(all, nil, 1); err != nil {
		t.Fatal(err)
	}
	got, err := x.lengths()
	if err != nil {
		t.Fatal(err)
	}
	want, err := ref.lengths()
	if err != nil {
		t.Fatal(err)
	}
	if string(got.encode()) != string(want.encode()) {
		t.Errorf("totals %v, want %v", got, want)
	}

	// An index bleve wrote has no bound: every document is looked up.
	old := filepath.Join(t.TempDir(), "old")
	writeWithBleve(t, old, docs(1, 20, "a"), 1)
	y, err := Open(old, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	wm = 1
	apply(y, "older index, new documents", docs(21, 25, "b"), nil, 5)
	apply(y, "older index, replaced", docs(1, 2, "c"), nil, 2)
}
