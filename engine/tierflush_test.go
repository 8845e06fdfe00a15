package engine

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// hookText is a text index that calls hook at every update.
type hookText struct {
	probeText
	hook func()
}

func (h *hookText) Apply(docs []TextDoc, del []uint64, wm uint64) error {
	if h.hook != nil {
		h.hook()
	}
	return h.probeText.Apply(docs, del, wm)
}

// TestBulkWritesTiersOnce: RememberBatches keeps the tier entries and
// headers of its batches in memory (below bulkFlushRecords dirty
// records) and writes them when it returns, instead of after every
// batch; the store it leaves (records with their headers, tier entries,
// tier counters) is byte for byte the store that one RememberBatch per
// batch leaves, and Get answers the same headers during the call.
func TestBulkWritesTiersOnce(t *testing.T) {
	clock := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	var bs []Batch
	for b := range 6 {
		var batch Batch
		for j := range 30 {
			n := b*30 + j
			batch.Inputs = append(batch.Inputs, Input{Scope: "s", Session: fmt.Sprint("session ", n/7), Role: []string{"user", "assistant"}[n%2],
				Time: clock.Add(time.Duration(n-400) * time.Hour), Text: fmt.Sprintf("note %d about topic%d and item%d", n, n%7, n%11)})
		}
		bs = append(bs, batch)
	}
	type dump struct{ records, active, stats []byte }
	run := func(bulk bool) (dump, []int, []Header) {
		dir := t.TempDir()
		var e *Engine
		var stored []int     // active entries stored at each archive update
		var headers []Header // Get's headers of the batches placed, at each update
		archive := &hookText{}
		o := probeTieredOptions(clock, archive)
		o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = 5, 20, 1, -1
		e, err := Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		archive.hook = func() {
			n := 0
			_ = e.db.View(func(tx *bolt.Tx) error { n = tx.Bucket(bucketActive).Stats().KeyN; return nil })
			stored = append(stored, n)
			for id := uint64(1); id <= uint64(30*len(stored)); id++ {
				r, err := e.Get(id)
				if err != nil {
					t.Error(err)
					return
				}
				headers = append(headers, r.Header)
			}
		}
		rememberAndClose(t, e, bs, bulk)
		db, err := bolt.Open(filepath.Join(dir, DBFile), 0o600, &bolt.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var d dump
		err = db.View(func(tx *bolt.Tx) error {
			for _, b := range []struct {
				name []byte
				out  *[]byte
			}{{bucketRecords, &d.records}, {bucketActive, &d.active}} {
				if err := tx.Bucket(b.name).ForEach(func(k, v []byte) error {
					*b.out = append(append(*b.out, k...), v...)
					return nil
				}); err != nil {
					return err
				}
			}
			d.stats = bytes.Clone(tx.Bucket(bucketMeta).Get(metaTierStats))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return d, stored, headers
	}
	one, perBatch, oneHeaders := run(false)
	bulk, deferred, bulkHeaders := run(true)
	if !slices.Equal(oneHeaders, bulkHeaders) || len(oneHeaders) == 0 {
		t.Fatalf("Get's headers during the writes differ (%d and %d read)", len(oneHeaders), len(bulkHeaders))
	}
	if !bytes.Equal(one.records, bulk.records) || !bytes.Equal(one.active, bulk.active) || !bytes.Equal(one.stats, bulk.stats) {
		t.Fatalf("stores differ: records %v, tier entries %v, tier counters %v (equal)",
			bytes.Equal(one.records, bulk.records), bytes.Equal(one.active, bulk.active), bytes.Equal(one.stats, bulk.stats))
	}
	if len(one.active) == 0 {
		t.Fatal("no tier entry stored")
	}
	if slices.Max(perBatch) == 0 {
		t.Fatalf("RememberBatch stored no tier entry before its index updates: %v", perBatch)
	}
	if slices.Max(deferred) != 0 {
		t.Fatalf("RememberBatches wrote tier entries during the call (entries stored at each update: %v)", deferred)
	}
}
