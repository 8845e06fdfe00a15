package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/engine"
)

// TestAppendedBucketsFillTheirPages: the buckets whose keys arrive in
// ascending order (ids, change-log sequences, times) fill their leaf
// pages; with bbolt's default split they were left about half empty.
func TestAppendedBucketsFillTheirPages(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	e := openAt(t, dir, clock)
	at := clock.t
	for b := range 4 {
		ins := make([]engine.Input, 1000)
		for i := range ins {
			n := b*len(ins) + i
			at = at.Add(time.Minute)
			ins[i] = engine.Input{Scope: "s", Session: fmt.Sprint(n / 20), Role: "user", Time: at,
				Text: fmt.Sprintf("note %d about the garden, the boat and a trip to city %d", n, n*7919%100003)}
		}
		if _, err := e.Remember(context.Background(), ins...); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(dir, engine.DBFile), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct {
		bucket string
		min    float64 // least share of the leaf pages in use
	}{
		{"vectors", 0.85},
		{"bytime", 0.85},
		{"next", 0.85},
		{"records", 0.8},
		{"dedupids", 0.8},
		{"segtree", 0.75},
		{"hymem", 0.75},
	} {
		t.Run(c.bucket, func(t *testing.T) {
			err := db.View(func(tx *bolt.Tx) error {
				b := tx.Bucket([]byte(c.bucket))
				if b == nil {
					return fmt.Errorf("no bucket %s", c.bucket)
				}
				s := b.Stats()
				if s.LeafPageN < 4 {
					return fmt.Errorf("%d leaf pages: too few to judge", s.LeafPageN)
				}
				if got := float64(s.LeafInuse) / float64(s.LeafAlloc); got < c.min {
					return fmt.Errorf("leaf pages %.2f in use (%d of %d bytes, %d pages), want at least %.2f", got, s.LeafInuse, s.LeafAlloc, s.LeafPageN, c.min)
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
}
