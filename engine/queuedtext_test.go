package engine

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
)

// queueProbe is a text index holding its documents in a map; applies
// counts its Apply calls.
type queueProbe struct {
	docs    map[uint64]TextDoc
	applies int
}

func (m *queueProbe) Apply(docs []TextDoc, dels []uint64, _ uint64) error {
	m.applies++
	for _, id := range dels {
		delete(m.docs, id)
	}
	for _, d := range docs {
		m.docs[d.ID] = d
	}
	return nil
}

func (m *queueProbe) Search(context.Context, string, int, TextFilter) ([]TextHit, error) {
	return nil, nil
}
func (m *queueProbe) Watermark() (uint64, error) { return 0, nil }
func (m *queueProbe) Close() error               { return nil }

// TestQueuedTextAppliesInOrder: random runs of queued changes (records
// added, replaced, deleted, added again after a deletion, deleted after
// an addition), applied by a reader in merged Applies, leave the index
// holding what applying each change in turn leaves; and the runs that
// delete a record an earlier change of theirs added take more than one
// Apply.
func TestQueuedTextAppliesInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	split := 0
	for run := range 500 {
		want := &queueProbe{docs: map[uint64]TextDoc{}}
		got := &queueProbe{docs: map[uint64]TextDoc{}}
		q := newQueuedText(got)
		n, changes := 1+rng.IntN(12), 0
		for i := range n {
			var docs []TextDoc
			var dels []uint64
			for range rng.IntN(3) {
				dels = append(dels, uint64(rng.IntN(6)))
			}
			for range rng.IntN(3) {
				docs = append(docs, TextDoc{ID: uint64(rng.IntN(6)), Text: fmt.Sprint("run ", run, " change ", i)})
			}
			if err := want.Apply(docs, dels, 0); err != nil {
				t.Fatal(err)
			}
			if err := q.enqueue(docs, dels); err != nil {
				t.Fatal(err)
			}
			changes += len(docs) + len(dels)
		}
		if q.queued() != (changes > 0) {
			t.Fatalf("run %d: %d changes, queued %v", run, changes, q.queued())
		}
		if _, err := q.Search(context.Background(), "x", 1, TextFilter{}); err != nil {
			t.Fatal(err)
		}
		if q.queued() || !maps.Equal(want.docs, got.docs) {
			t.Fatalf("run %d: queued %v, in turn %v, merged %v", run, q.queued(), want.docs, got.docs)
		}
		if got.applies > 1 {
			split++
		}
	}
	if split == 0 {
		t.Fatal("no run needed more than one Apply: the test does not exercise the splits")
	}
}

// TestQueuedTextIsBounded: a queue that no reader applies is applied by
// the change that brings it to queuedBound documents and deletions.
func TestQueuedTextIsBounded(t *testing.T) {
	ix := &queueProbe{docs: map[uint64]TextDoc{}}
	q := newQueuedText(ix)
	for i := range queuedBound - 1 {
		if err := q.enqueue([]TextDoc{{ID: uint64(i)}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if !q.queued() || len(ix.docs) != 0 {
		t.Fatalf("below the bound: queued %v, %d documents applied", q.queued(), len(ix.docs))
	}
	if err := q.enqueue(nil, []uint64{0}); err != nil {
		t.Fatal(err)
	}
	if q.queued() || len(ix.docs) != queuedBound-2 {
		t.Fatalf("at the bound: queued %v, %d documents applied, want %d", q.queued(), len(ix.docs), queuedBound-2)
	}
}
