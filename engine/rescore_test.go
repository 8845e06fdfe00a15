package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/internal/testembed"
	bolt "go.etcd.io/bbolt"
)

// TestRescoreHalves: the vector candidates rescored from the stored
// vectors, read in one transaction below parallelRescore distinct hits
// and in two halves on two goroutines from it on, score and rank as a
// rescoring read through bbolt in one transaction: exact cosines, best
// first, ties to the lower id, duplicates once, the forgotten records
// (one in each half) dropped, at most k. The vector candidates' docs read
// ahead (archiveSource.Prefetch, in halves from parallelTextDocs ids)
// are all in the doc cache afterwards, and are the docs read from the
// store.
func TestRescoreHalves(t *testing.T) {
	for _, n := range []int{parallelRescore/2 + 1, 3 * parallelRescore} {
		t.Run(fmt.Sprint(n, " hits"), func(t *testing.T) { testRescoreHalves(t, n) })
	}
}

func testRescoreHalves(t *testing.T, n int) {
	o := &Options{
		Mode:            ModeFlat,
		Embedder:        testembed.Hash{ID: "test:hash/16", Size: 16},
		OpenVectorIndex: func(_ string, dims int) (VectorIndex, error) { return newMemVectors(dims), nil },
		OpenTextIndex:   func(string) (TextIndex, error) { return &mapText{docs: map[uint64]TextDoc{}}, nil },
	}
	e, err := Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var in []Input
	for i := range n {
		in = append(in, Input{Scope: "s", Session: "1", Role: "user", Text: fmt.Sprintf("note %d about the lake and boat %d", i, i*7%5)})
	}
	ids, err := e.Remember(context.Background(), in...)
	if err != nil {
		t.Fatal(err)
	}
	gone := map[uint64]bool{ids[1]: true, ids[n-2]: true}
	for id := range gone {
		if err := e.Forget(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	qv, err := e.opts.Embedder.Embed(context.Background(), []string{"the lake"})
	if err != nil {
		t.Fatal(err)
	}
	// The hits in the index's order (not by id), one twice.
	hits := make([]VectorHit, 0, n+1)
	for i := n - 1; i >= 0; i-- {
		hits = append(hits, VectorHit{ID: ids[i], Score: float32(i)})
	}
	hits = append(hits, VectorHit{ID: ids[n/2]})
	// The reference: every vector read through bbolt in one transaction.
	uq := unitQuery(qv[0])
	var want []VectorHit
	if err := e.db.View(func(tx *bolt.Tx) error {
		vs := e.storedVectors(tx)
		for _, id := range ids {
			v, err := vs.get(id)
			if err != nil || !normalize(v) {
				continue
			}
			want = append(want, VectorHit{ID: id, Score: dot(uq, v)})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(want) != n-len(gone) {
		t.Fatalf("%d stored vectors, want %d", len(want), n-len(gone))
	}
	slices.SortFunc(want, func(a, b VectorHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	for _, k := range []int{n, n / 3} {
		got, err := e.rescore(qv[0], hits, k)
		if err != nil {
			t.Fatal(err)
		}
		if w := want[:min(k, len(want))]; !slices.Equal(got, w) {
			t.Errorf("k %d: rescored\n%v\nwant\n%v", k, got, w)
		}
	}
	e.docCache.drop(ids...)
	(&archiveSource{e: e}).Prefetch(ids)
	for _, id := range ids {
		d, ok := e.docCache.get(id)
		if ok == gone[id] {
			t.Fatalf("record %d (forgotten %v): cached %v after the read-ahead", id, gone[id], ok)
		}
		if ok {
			r, err := e.Get(id)
			if err != nil {
				t.Fatal(err)
			}
			if d.ID != id || d.Text != r.Text || d.Session != r.Session {
				t.Errorf("record %d read ahead as %+v, stored %+v", id, d, r)
			}
		}
	}
}
