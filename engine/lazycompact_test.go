package engine

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"
)

// mapText is a TextIndex holding the last document applied for each id;
// Apply deletes before it adds, as fts' indexes do.
type mapText struct {
	mu   sync.Mutex
	docs map[uint64]TextDoc
}

func (m *mapText) Apply(docs []TextDoc, dels []uint64, _ uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range dels {
		delete(m.docs, id)
	}
	for _, d := range docs {
		m.docs[d.ID] = d
	}
	return nil
}

func (m *mapText) Search(context.Context, string, int, TextFilter) ([]TextHit, error) {
	return nil, nil
}
func (m *mapText) Watermark() (uint64, error) { return 0, nil }
func (m *mapText) Close() error               { return nil }

// TestLazyTextKeepsWhatItWillHold: a tier index that is written to and
// never searched (an import in tiered mode) keeps a bounded list of
// changes, and filling it gives the index that applying every change in
// order gives: records added at open, built later (applyLater), moved in
// and out, deleted and added again.
func TestLazyTextKeepsWhatItWillHold(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	doc := func(id uint64, v int) TextDoc {
		return TextDoc{ID: id, Text: fmt.Sprintf("record %d version %d", id, v)}
	}
	type op struct {
		docs []TextDoc
		dels []uint64
	}
	var ops []op
	lazy := newLazyText(&mapText{docs: map[uint64]TextDoc{}})
	want := &mapText{docs: map[uint64]TextDoc{}}
	apply := func(o op) {
		t.Helper()
		ops = append(ops, o)
		if err := lazy.Apply(o.docs, o.dels, 0); err != nil {
			t.Fatal(err)
		}
		if err := want.Apply(o.docs, o.dels, 0); err != nil {
			t.Fatal(err)
		}
	}
	// At open: Tier 1's documents, then Tier 2's, built at the fill.
	var first []TextDoc
	for id := uint64(1); id <= 50; id++ {
		first = append(first, doc(id, 0))
	}
	apply(op{docs: first})
	var later []TextDoc
	var laterIDs []uint64
	for id := uint64(51); id <= 300; id++ {
		later, laterIDs = append(later, doc(id, 0)), append(laterIDs, id)
	}
	lazy.applyLater(laterIDs, func() ([]TextDoc, error) { return later, nil })
	if err := want.Apply(later, nil, 0); err != nil {
		t.Fatal(err)
	}
	most := 0
	for i := range 40000 {
		var o op
		for range 1 + r.IntN(4) {
			id := uint64(1 + r.IntN(2000)) // new records pass through, most leave
			if r.IntN(3) == 0 {
				o.dels = append(o.dels, id)
			} else {
				o.docs = append(o.docs, doc(id, i))
			}
		}
		apply(o)
		lazy.mu.Lock()
		n := 0
		for _, p := range lazy.pending {
			n += len(p.docs) + len(p.dels)
		}
		lazy.mu.Unlock()
		most = max(most, n)
	}
	if limit := 2*2000 + 2*compactAbove + len(first); most > limit {
		t.Errorf("the lazy index kept up to %d pending documents and deletions over %d changes, want at most %d", most, len(ops), limit)
	}
	if _, err := lazy.Search(context.Background(), "record", 1, TextFilter{}); err != nil {
		t.Fatal(err)
	}
	got := lazy.ix.(*mapText).docs
	if !maps.Equal(got, want.docs) {
		t.Errorf("filled index holds %d documents, applying every change %d", len(got), len(want.docs))
		for id, d := range want.docs {
			if got[id] != d {
				t.Errorf("record %d: %+v, want %+v", id, got[id], d)
				break
			}
		}
	}
}
