package engine

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestReleasedReaderReused: a bucket released at the end of its reads
// (releaseBucket) gives its reader and page buffer to the next
// transaction's; the copies taken before (Get) keep their bytes while
// other transactions read through the reused readers, one after another
// and at once; the released bucket reads on through bbolt, still
// exactly; and a reader taken after finds every value as bbolt does.
func TestReleasedReaderReused(t *testing.T) {
	s := newPreadStore(t, 9, 4096)
	s.write(t, 800) // values up to several pages: the buffer grows past a page
	probes := s.probes(400)
	type kept struct{ got, want []byte }
	var held []kept
	var released kvSeeker
	err := s.db.View(func(tx *bolt.Tx) error {
		b := s.db.preadBucket(tx, []byte("b"))
		if _, ok := b.(*preadBucket); !ok {
			return fmt.Errorf("not read by pread")
		}
		for _, k := range probes {
			held = append(held, kept{b.Get(k), bytes.Clone(tx.Bucket([]byte("b")).Get(k))})
		}
		releaseBucket(b)
		releaseBucket(b) // twice: nothing more
		released = b
		// Read after the release: through bbolt, the same values.
		for _, k := range probes[:50] {
			if g, w := b.Get(k), tx.Bucket([]byte("b")).Get(k); !bytes.Equal(g, w) || (g == nil) != (w == nil) {
				return fmt.Errorf("Get(%x) after the release: %d bytes, bbolt %d", k, len(g), len(w))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pb := released.(*preadBucket); pb.r != nil || !pb.failed {
		t.Fatal("a released bucket keeps its reader")
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for range 5 {
				err := s.db.View(func(tx *bolt.Tx) error {
					b := s.db.preadBucket(tx, []byte("b"))
					defer releaseBucket(b)
					for _, k := range probes {
						if g, w := peekValue(b, k), tx.Bucket([]byte("b")).Get(k); !bytes.Equal(g, w) || (g == nil) != (w == nil) {
							return fmt.Errorf("peek(%x) by a reused reader: %d bytes, bbolt %d", k, len(g), len(w))
						}
					}
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for i, h := range held {
		if !bytes.Equal(h.got, h.want) || (h.got == nil) != (h.want == nil) {
			t.Fatalf("value %d, copied before the release, changed: %d bytes, want %d", i, len(h.got), len(h.want))
		}
	}
	if err := compare(s.db, []byte("b"), probes, true); err != nil {
		t.Fatal(err)
	}
}
