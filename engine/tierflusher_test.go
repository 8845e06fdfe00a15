package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/internal/testembed"
)

// TestRecallDoesNotWaitForTheFlush: a recall whose accesses make the
// flush of the tier counters due (FlushAccesses 1) returns while another
// writer holds bbolt's write lock: the tier flusher commits the flush, not
// the recall. Once the writer is gone, the counters are committed, and a
// Close after more recalls leaves every recall counted in the store.
func TestRecallDoesNotWaitForTheFlush(t *testing.T) {
	clock := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	o := probeTieredOptions(clock, &probeText{})
	o.FlushAccesses = 1
	e, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	var ins []Input
	for i := range 12 {
		ins = append(ins, Input{Scope: "s", Session: "one", Text: fmt.Sprintf("note %d about topic%d", i, i%4)})
	}
	if _, err := e.Remember(context.Background(), ins...); err != nil {
		t.Fatal(err)
	}
	if err := e.flushAccesses(); err != nil {
		t.Fatal(err)
	}
	tx, err := e.db.Begin(true) // another writer
	if err != nil {
		t.Fatal(err)
	}
	type reply struct {
		res []Result
		err error
	}
	done := make(chan reply, 1)
	go func() {
		res, err := e.Recall(context.Background(), Query{Text: "topic1", K: 3})
		done <- reply{res, err}
	}()
	var first reply
	select {
	case first = <-done:
	case <-time.After(30 * time.Second):
		_ = tx.Rollback()
		<-done
		t.Fatal("the recall waited for bbolt's write lock: it flushed the tier counters itself")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if first.err != nil || len(first.res) == 0 {
		t.Fatalf("recall: %v, %d results", first.err, len(first.res))
	}
	counted := map[uint64]uint32{}
	for _, r := range first.res {
		counted[r.Record.ID]++
	}
	for range 5 {
		res, err := e.Recall(context.Background(), Query{Text: "topic2", K: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			counted[r.Record.ID]++
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for id, n := range counted {
		r, err := e.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Header.N != n {
			t.Errorf("record %d: n %d stored, recalled %d times", id, r.Header.N, n)
		}
	}
}

// probeTieredOptions are the options of a tiered engine at a fixed
// clock, with a hash embedder, vectors in memory, archive as its text
// index and probe text indexes for the tiers.
func probeTieredOptions(clock time.Time, archive TextIndex) *Options {
	return &Options{
		Mode:             ModeTiered,
		Clock:            func() time.Time { return clock },
		Embedder:         testembed.Hash{ID: "test:hash/16", Size: 16},
		OpenVectorIndex:  func(_ string, dims int) (VectorIndex, error) { return newMemVectors(dims), nil },
		OpenTextIndex:    func(string) (TextIndex, error) { return archive, nil },
		NewTierTextIndex: func() (TextIndex, error) { return &probeText{}, nil },
	}
}
