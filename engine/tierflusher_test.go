package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

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
	ins := probeNotes()
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
	e = reopen(t, e, dir, o)
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

// probeNotes are 12 notes of one session, on 4 topics.
func probeNotes() []Input {
	var ins []Input
	for i := range 12 {
		ins = append(ins, Input{Scope: "s", Session: "one", Text: fmt.Sprintf("note %d about topic%d", i, i%4)})
	}
	return ins
}

// reopen closes e and opens dir again with o.
func reopen(t *testing.T, e *Engine, dir string, o *Options) *Engine {
	t.Helper()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return e
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

// TestBulkAdmissionDoesNotWaitForTheFlush: on the bulk path
// (RememberBatches), the admission of a committed batch that makes the
// tier entries' write due hands it to the tier flusher and returns while
// another writer (there, the next batch's commit) holds bbolt's write
// lock. Once the writer is gone the entries are committed: a reopened
// store has every record in the tier the admission placed it in.
func TestBulkAdmissionDoesNotWaitForTheFlush(t *testing.T) {
	defer func(n int) { bulkFlushRecords = n }(bulkFlushRecords)
	bulkFlushRecords = 1
	clock := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	o := probeTieredOptions(clock, &probeText{})
	e, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	ins := probeNotes()
	e.wmu.Lock()
	c, err := e.commitOne(context.Background(), &Batch{Inputs: ins}, nil)
	if err != nil {
		e.wmu.Unlock()
		t.Fatal(err)
	}
	tx, err := e.db.Begin(true) // another writer
	if err != nil {
		e.wmu.Unlock()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.admit(c.ids, true) }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = tx.Rollback()
		<-done
		e.wmu.Unlock()
		t.Fatal("the bulk admission waited for bbolt's write lock: it wrote the tier entries itself")
	}
	if rerr := tx.Rollback(); rerr != nil {
		t.Fatal(rerr)
	}
	if err != nil {
		e.wmu.Unlock()
		t.Fatal(err)
	}
	if err := e.syncUpTo(c.seq); err != nil {
		e.wmu.Unlock()
		t.Fatal(err)
	}
	e.wmu.Unlock()
	placed := map[uint64]uint8{}
	for _, id := range c.ids {
		placed[id] = e.tiers.mgr.Tier(id)
	}
	e.tiers.stopFlusher() // waits for the flush it was asked for
	tiers := 0
	if err := e.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketActive).ForEach(func(_, _ []byte) error { tiers++; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if tiers == 0 {
		t.Fatal("the flusher wrote no tier entry")
	}
	e = reopen(t, e, dir, o)
	defer e.Close()
	for id, want := range placed {
		if got := e.tiers.mgr.Tier(id); got != want {
			t.Errorf("record %d: tier %d after reopening, %d placed", id, got, want)
		}
	}
}
