package engine

import (
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestKeptLeafOf: the leaf the kept branch pages name for a key is the
// page the reader reads it from, for every key of a bucket several
// levels deep, present or not; before any branch is kept, none is named.
func TestKeptLeafOf(t *testing.T) {
	s := newPreadStore(t, 11, 4096)
	s.write(t, 3000)
	s.db.pages.maxBytes = -1 // no leaf kept: every get reads its leaf
	err := s.db.View(func(tx *bolt.Tx) error {
		p, ok := s.db.preadBucket(tx, []byte("b")).(*preadBucket)
		if !ok {
			t.Fatal("not read by pread")
		}
		defer releaseBucket(p)
		if _, ok := p.r.keptLeafOf(p.root, u64key(1)); ok {
			t.Error("a leaf named before any branch page was kept")
		}
		depth, checked := 0, 0
		for id := range uint64(4100) {
			k := u64key(id)
			if _, err := p.r.get(p.root, k); err != nil {
				t.Fatal(err)
			}
			leaf, ok := p.r.keptLeafOf(p.root, k)
			if !ok || leaf != p.r.leafN {
				t.Fatalf("key %d: kept branches name page %d (%v), the read was of page %d", id, leaf, ok, p.r.leafN)
			}
			checked++
			if d := s.db.pages.branches; len(d) > depth {
				depth = len(d)
			}
		}
		if depth < 2 || checked != 4100 {
			t.Fatalf("%d keys checked under %d branch pages: the test needs a deeper tree", checked, depth)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
