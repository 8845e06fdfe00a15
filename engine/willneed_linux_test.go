package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// coldStore is a bbolt file of n 200-byte values under keys 0..n-1 in
// bucket "b" (some 230 leaf pages under a few branch pages), opened anew
// for pread, with a read-only mapping of the file to tell which of its
// pages are in the page cache.
type coldStore struct {
	d   *boltDB
	f   *os.File
	m   []byte
	val func(uint64) string
}

func newColdStore(t *testing.T, n uint64) *coldStore {
	t.Helper()
	path := filepath.Join(t.TempDir(), DBFile)
	db, err := bolt.Open(path, 0o600, &bolt.Options{PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	s := &coldStore{val: func(id uint64) string { return fmt.Sprintf("%0200d", id) }}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("b"))
		if err != nil {
			return err
		}
		for i := range n {
			if err := b.Put(u64key(i), []byte(s.val(i))); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if db, err = bolt.Open(path, 0o600, nil); err != nil {
		t.Fatal(err)
	}
	s.d = &boltDB{DB: db}
	t.Cleanup(func() { s.d.Close() })
	if s.f, err = os.Open(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.f.Close() })
	fi, err := s.f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if s.m, err = unix.Mmap(int(s.f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(s.m) })
	return s
}

// view runs fn in a read transaction with bucket "b" read by pread, and
// skips the test when it cannot be.
func (s *coldStore) view(t *testing.T, fn func(recs kvSeeker, p *preadBucket)) {
	t.Helper()
	err := s.d.View(func(tx *bolt.Tx) error {
		recs := s.d.preadBucket(tx, []byte("b"))
		defer releaseBucket(recs)
		p, ok := recs.(*preadBucket)
		if !ok || !p.r.direct {
			t.Skip("SKIPPED: the store is not read by pread here")
		}
		fn(recs, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// resident reports whether page id of the file is in the page cache
// (mincore; the page is not read).
func (s *coldStore) resident(t *testing.T, id uint64) bool {
	var vec [1]byte
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&s.m[id*4096])), 4096, uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	return vec[0]&1 != 0
}

// readKept reads every step-th key, so that the branch pages are kept,
// and returns the leaf of each key of batch, all distinct.
func (s *coldStore) readKept(t *testing.T, p *preadBucket, n, step uint64, batch []uint64) []uint64 {
	t.Helper()
	for id := uint64(0); id < n; id += step {
		if string(p.Get(u64key(id))) != s.val(id) {
			t.Fatalf("key %d read wrong", id)
		}
	}
	seen := map[uint64]bool{}
	var leaves []uint64
	for _, id := range batch {
		leaf, ok := p.r.keptLeafOf(p.root, u64key(id))
		if !ok || seen[leaf] {
			t.Fatalf("key %d: leaf %d (%v): the batch's keys need distinct leaves under kept branches", id, leaf, ok)
		}
		seen[leaf] = true
		leaves = append(leaves, leaf)
	}
	return leaves
}

// TestWillNeedReadsTheLeaves: willNeed asks the kernel for the leaf
// pages of a batch's keys: out of the page cache, they come into it
// without being read.
func TestWillNeedReadsTheLeaves(t *testing.T) {
	const n = 4000
	s := newColdStore(t, n)
	batch := []uint64{1010, 1610, 2210, 2810, 3410, 3910}
	s.view(t, func(recs kvSeeker, p *preadBucket) {
		leaves := s.readKept(t, p, n, 50, batch)
		if err := unix.Fadvise(int(s.f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			t.Fatal(err)
		}
		for _, leaf := range leaves {
			if s.resident(t, leaf) {
				t.Skipf("SKIPPED: the page cache cannot be dropped here (tmpfs?): leaf page %d still cached", leaf)
			}
		}
		willNeed(recs, batch)
		deadline := time.Now().Add(10 * time.Second)
		for _, leaf := range leaves {
			for !s.resident(t, leaf) {
				if time.Now().After(deadline) {
					t.Fatalf("leaf page %d not in the page cache 10 s after the advice", leaf)
				}
				time.Sleep(time.Millisecond)
			}
		}
	})
}

// TestWhenColdRunsOnce: the work set by whenCold runs at the first leaf
// page its reads find out of the page cache, once; reads that find
// their pages cached never run it. readCachedFunc stands in for the
// kernel: the pages of cold are out of the page cache.
func TestWhenColdRunsOnce(t *testing.T) {
	const n = 4000
	s := newColdStore(t, n)
	cold := map[int64]bool{}
	defer func(f func(int, []byte, int64) (bool, bool)) { readCachedFunc = f }(readCachedFunc)
	readCachedFunc = func(fd int, p []byte, off int64) (bool, bool) {
		if cold[off] {
			return false, true
		}
		_, err := s.f.ReadAt(p, off)
		return err == nil, false
	}
	s.view(t, func(recs kvSeeker, p *preadBucket) {
		batch := []uint64{1010, 1610, 2210, 2810}
		leaves := s.readKept(t, p, n, 50, batch)
		runs := 0
		whenCold(recs, func() { runs++ })
		for _, id := range batch {
			if string(p.Get(u64key(id))) != s.val(id) {
				t.Fatalf("key %d read wrong", id)
			}
		}
		if runs != 0 {
			t.Fatalf("reads of cached pages ran the cold work %d times", runs)
		}
		for _, leaf := range leaves[1:] {
			cold[int64(leaf)*4096] = true
		}
		for _, id := range batch {
			if string(p.Get(u64key(id))) != s.val(id) {
				t.Fatalf("key %d read wrong", id)
			}
		}
		if runs != 1 {
			t.Fatalf("reads of 3 cold leaves ran the cold work %d times, want 1", runs)
		}
	})
}
