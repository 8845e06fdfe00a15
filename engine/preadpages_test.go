package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// preadStore is a bbolt file with one bucket, "b", of random keys: 8-byte
// ids (as the records and vectors buckets hold) and keys of other
// lengths, values from empty to several pages (overflow pages), and a
// nested bucket; "small" is a bucket small enough to be inline.
type preadStore struct {
	db   *boltDB
	rng  *rand.Rand
	keys [][]byte // every key ever written, present or not
}

func newPreadStore(t *testing.T, seed uint64, pageSize int) *preadStore {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), DBFile), 0o600, &bolt.Options{PageSize: pageSize})
	if err != nil {
		t.Fatal(err)
	}
	s := &preadStore{db: &boltDB{DB: db}, rng: rand.New(rand.NewPCG(seed, 7))}
	t.Cleanup(func() { s.db.Close() })
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("b"))
		if err != nil {
			return err
		}
		if _, err := b.CreateBucket(u64key(500)); err != nil { // a key naming a nested bucket
			return err
		}
		small, err := tx.CreateBucket([]byte("small"))
		if err != nil {
			return err
		}
		return small.Put(u64key(1), []byte("inline"))
	})
	if err != nil {
		t.Fatal(err)
	}
	s.keys = append(s.keys, u64key(500))
	return s
}

func (s *preadStore) key() []byte {
	if s.rng.IntN(4) > 0 {
		return u64key(s.rng.Uint64N(4000))
	}
	k := make([]byte, 1+s.rng.IntN(40))
	for i := range k {
		k[i] = byte(s.rng.IntN(256))
	}
	return k
}

func (s *preadStore) value() []byte {
	n := s.rng.IntN(500)
	switch s.rng.IntN(20) {
	case 0:
		n = 0
	case 1:
		n = 4000 + s.rng.IntN(20000) // past a page: overflow pages
	}
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(s.rng.IntN(256))
	}
	return v
}

// write puts n random keys, deletes about a third as many, and rewrites
// some present ones, in one transaction.
func (s *preadStore) write(t *testing.T, n int) {
	t.Helper()
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("b"))
		for range n {
			k := s.key()
			if bytes.Equal(k, u64key(500)) {
				continue
			}
			if err := b.Put(k, s.value()); err != nil {
				return err
			}
			s.keys = append(s.keys, k)
		}
		for range n / 3 {
			k := s.keys[s.rng.IntN(len(s.keys))]
			if bytes.Equal(k, u64key(500)) {
				continue
			}
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		for range n / 5 {
			k := s.keys[s.rng.IntN(len(s.keys))]
			if b.Get(k) != nil {
				if err := b.Put(k, s.value()); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// probes is written keys and random ones (mostly absent).
func (s *preadStore) probes(n int) [][]byte {
	out := make([][]byte, 0, n)
	for range n {
		if s.rng.IntN(3) == 0 {
			out = append(out, s.key())
		} else {
			out = append(out, s.keys[s.rng.IntN(len(s.keys))])
		}
	}
	return out
}

// compare reads every probe of bucket name through pread and through
// bbolt in one read transaction and reports the first difference.
func compare(db *boltDB, name []byte, probes [][]byte, wantPread bool) error {
	return db.View(func(tx *bolt.Tx) error {
		got := db.preadBucket(tx, name)
		pb, isPread := got.(*preadBucket)
		if isPread != wantPread {
			return fmt.Errorf("bucket %s read by pread: %v, want %v", name, isPread, wantPread)
		}
		want := tx.Bucket(name)
		for _, k := range probes {
			g, w := got.Get(k), want.Get(k)
			if (g == nil) != (w == nil) || !bytes.Equal(g, w) {
				return fmt.Errorf("Get(%x): pread %d bytes (nil %v), bbolt %d bytes (nil %v)", k, len(g), g == nil, len(w), w == nil)
			}
			gk, gv := got.Seek(k)
			wk, wv := want.Cursor().Seek(k)
			if !bytes.Equal(gk, wk) || (gk == nil) != (wk == nil) || !bytes.Equal(gv, wv) || (gv == nil) != (wv == nil) {
				return fmt.Errorf("Seek(%x): pread %x (%d bytes, nil %v), bbolt %x (%d bytes, nil %v)", k, gk, len(gv), gv == nil, wk, len(wv), wv == nil)
			}
		}
		if pb != nil && pb.failed {
			return fmt.Errorf("the pread walk failed on a sound file and fell back to bbolt")
		}
		return nil
	})
}

// TestPreadMatchesBolt: a bucket read by pread (pageReader) returns
// exactly what bbolt's Get and Cursor.Seek return, on random stores, for
// present and absent keys, overflow values, a nested bucket's key, after
// deletes and rewrites, from leaf pages read and kept, and with page
// sizes that make deep trees.
func TestPreadMatchesBolt(t *testing.T) {
	for _, tc := range []struct {
		seed     uint64
		pageSize int
		rounds   int
	}{
		{1, 4096, 6},
		{2, 4096, 3},
		{3, 1024, 6}, // small pages: more levels of branch pages
		{4, 1024, 4},
		{5, 8192, 3},
	} {
		t.Run(fmt.Sprintf("seed=%d,page=%d", tc.seed, tc.pageSize), func(t *testing.T) {
			s := newPreadStore(t, tc.seed, tc.pageSize)
			if err := compare(s.db, []byte("b"), s.probes(50), true); err != nil {
				t.Fatalf("empty bucket: %v", err)
			}
			for round := range tc.rounds {
				s.write(t, 600)
				if err := compare(s.db, []byte("b"), s.probes(1500), true); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				// The same generation again: from the branch cache.
				if err := compare(s.db, []byte("b"), s.probes(500), true); err != nil {
					t.Fatalf("round %d, cached branch pages: %v", round, err)
				}
				// The same keys until their leaves are kept: their values
				// are then copied from the kept pages.
				again := s.probes(300)
				for i := range leafAdmit + 2 {
					if err := compare(s.db, []byte("b"), again, true); err != nil {
						t.Fatalf("round %d, read %d of the same keys: %v", round, i, err)
					}
				}
			}
			// An inline bucket has no page of its own: bbolt reads it.
			if err := compare(s.db, []byte("small"), [][]byte{u64key(1), u64key(2)}, false); err != nil {
				t.Fatal(err)
			}
			// Without the file to pread, and in a write transaction,
			// bbolt reads.
			nofile := &boltDB{DB: s.db.DB}
			nofile.closePread()
			if err := compare(nofile, []byte("b"), s.probes(100), false); err != nil {
				t.Fatalf("without the file: %v", err)
			}
			err := s.db.Update(func(tx *bolt.Tx) error {
				if _, ok := s.db.preadBucket(tx, []byte("b")).(*preadBucket); ok {
					return fmt.Errorf("a write transaction's bucket is read by pread")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestPreadLongRun: a value whose page run is longer than maxPreadRun is
// read by bbolt, key by key, and the bucket goes on reading by pread.
func TestPreadLongRun(t *testing.T) {
	s := newPreadStore(t, 11, 1024)
	s.write(t, 600)
	defer func(n int64) { maxPreadRun = n }(maxPreadRun)
	maxPreadRun = 2 * 1024 // values of more than one overflow page
	if err := compare(s.db, []byte("b"), s.probes(1500), true); err != nil {
		t.Fatal(err)
	}
	long, short := 0, 0
	err := s.db.View(func(tx *bolt.Tx) error {
		b := s.db.preadBucket(tx, []byte("b")).(*preadBucket)
		return tx.Bucket([]byte("b")).ForEach(func(k, v []byte) error {
			_, err := b.r.get(b.root, k)
			switch {
			case errors.Is(err, errLongRun):
				long++
			case err == nil:
				short++
			default:
				return err
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if long == 0 || short == 0 {
		t.Fatalf("%d values past the bound, %d within it: the store does not test the bound", long, short)
	}
}

// TestPreadDuringWrites: readers comparing pread with bbolt, each in its
// read transaction, while a writer commits puts, deletes and rewrites:
// the pages a reader's transaction reaches are not reused while it is
// open, and the branch cache never serves a page of another generation.
func TestPreadDuringWrites(t *testing.T) {
	s := newPreadStore(t, 9, 1024)
	s.write(t, 1000)
	probes := s.probes(3000)
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := compare(s.db, []byte("b"), probes, true); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 40 {
		s.write(t, 150)
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestPreadDamagedPage: a leaf page whose bytes are damaged makes the
// pread walk fail without a panic; the bucket then reads through bbolt
// and returns what bbolt returns.
func TestPreadDamagedPage(t *testing.T) {
	s := newPreadStore(t, 11, 4096)
	s.write(t, 400)
	var leaf uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		r := s.db.newPageReader(tx)
		b := tx.Bucket([]byte("b"))
		br, _, err := r.page(uint64(b.Root()))
		if err != nil {
			return err
		}
		if br == nil {
			return fmt.Errorf("the bucket's root is not a branch page")
		}
		leaf = br.kids[0]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The file pageReader reads, damaged where bbolt does not look: a
	// copy of it with the leaf's header overwritten.
	path := s.db.Path()
	for i, damage := range []func(p []byte){
		func(p []byte) { binary.LittleEndian.PutUint64(p, 0) },           // wrong page id
		func(p []byte) { binary.LittleEndian.PutUint16(p[8:], 0x40) },    // unknown flags
		func(p []byte) { binary.LittleEndian.PutUint16(p[10:], 0xFFFF) }, // elements past the page
		func(p []byte) { // every key past the page
			for i := range int(binary.LittleEndian.Uint16(p[10:])) {
				binary.LittleEndian.PutUint32(p[pageHeaderSize+i*leafElementSize+4:], 1<<30)
			}
		},
		func(p []byte) { binary.LittleEndian.PutUint32(p[12:], 1<<30) }, // overflow past the file
	} {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ps := int64(4096)
		damage(raw[int64(leaf)*ps : int64(leaf+1)*ps])
		r := &pageReader{f: bytes.NewReader(raw), ps: ps, hwm: uint64(int64(len(raw)) / ps), cache: &pageCache{}}
		err = s.db.View(func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte("b"))
			pb := &preadBucket{r: r, b: b, root: uint64(b.Root())}
			for _, k := range s.probes(300) {
				if g, w := pb.Get(k), b.Get(k); !bytes.Equal(g, w) || (g == nil) != (w == nil) {
					return fmt.Errorf("Get(%x) on a damaged page: %d bytes, bbolt %d", k, len(g), len(w))
				}
				gk, gv := pb.Seek(k)
				if wk, wv := b.Cursor().Seek(k); !bytes.Equal(gk, wk) || !bytes.Equal(gv, wv) {
					return fmt.Errorf("Seek(%x) on a damaged page: %x, bbolt %x", k, gk, wk)
				}
			}
			if !pb.failed {
				return fmt.Errorf("damage %d: no read reported the damaged leaf %d", i, leaf)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzPreadPages: the pread walk (Get's and Seek's) never panics or
// hangs on any bytes, and what it returns lies inside the file.
func FuzzPreadPages(f *testing.F) {
	const ps = 512
	db, err := bolt.Open(filepath.Join(f.TempDir(), DBFile), 0o600, &bolt.Options{PageSize: ps})
	if err != nil {
		f.Fatal(err)
	}
	var root, size uint64
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("b"))
		if err != nil {
			return err
		}
		for i := range uint64(60) {
			if err := b.Put(u64key(3*i), bytes.Repeat([]byte{byte(i)}, int(i%5)*20)); err != nil {
				return err
			}
		}
		if err := b.Put(u64key(1000), make([]byte, 2*ps)); err != nil { // overflow pages
			return err
		}
		_, err = b.CreateBucket(u64key(2000))
		return err
	})
	if err == nil {
		err = db.View(func(tx *bolt.Tx) error {
			root, size = uint64(tx.Bucket([]byte("b")).Root()), uint64(tx.Size())
			return nil
		})
	}
	path := db.Path()
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		f.Fatal(err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	file = file[:min(size, uint64(len(file)))] // to the high-water mark: a small seed
	seed := &pageReader{f: bytes.NewReader(file), ps: ps, hwm: uint64(len(file) / ps), cache: &pageCache{}}
	if v, err := seed.get(root, u64key(1000)); err != nil || len(v) != 2*ps {
		f.Fatalf("the seed's overflow value: %d bytes, %v", len(v), err)
	}
	if k, _, err := seed.seek(root, u64key(4)); err != nil || !bytes.Equal(k, u64key(6)) {
		f.Fatalf("the seed's seek past 4: %x, %v", k, err)
	}
	for _, k := range []uint64{0, 3, 4, 1000, 2000, 5000} {
		f.Add(file, uint16(root), u64key(k))
	}
	f.Fuzz(func(t *testing.T, file []byte, root uint16, key []byte) {
		r := &pageReader{f: bytes.NewReader(file), ps: ps, hwm: uint64(len(file) / ps), cache: &pageCache{}}
		if v, err := r.get(uint64(root), key); err == nil && len(v) > len(file) {
			t.Fatalf("a value of %d bytes from a file of %d", len(v), len(file))
		}
		if k, v, err := r.seek(uint64(root), key); err == nil && len(k)+len(v) > len(file) {
			t.Fatalf("a key and value of %d bytes from a file of %d", len(k)+len(v), len(file))
		}
	})
}

// countingFile counts the reads of a file.
type countingFile struct {
	f     *bytes.Reader
	reads int
}

func (c *countingFile) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.f.ReadAt(p, off)
}

// TestPreadLeafCache: a leaf page read leafAdmit times in a generation is
// kept, and later reads of its keys, by other readers of the generation,
// read no page; the cache keeps at most its bound of pages; a reader of
// an older generation neither uses nor fills it, and a newer one starts
// it over.
func TestPreadLeafCache(t *testing.T) {
	s := newPreadStore(t, 21, 4096)
	s.write(t, 2000)
	path := s.db.Path()
	var keys [][]byte // present 8-byte keys, one a leaf page of one page (a run is not kept)
	var leaves []uint64
	var pair [][]byte // two keys of one leaf
	err := s.db.View(func(tx *bolt.Tx) error {
		seen := map[uint64]bool{}
		r := s.db.newPageReader(tx)
		pb := readBucket(r, tx, []byte("b")).(*preadBucket)
		return tx.Bucket([]byte("b")).ForEach(func(k, v []byte) error {
			if len(k) != 8 || v == nil {
				return nil
			}
			if _, err := r.get(pb.root, k); err != nil {
				return err
			}
			if seen[r.leafN] && pair == nil && len(r.leaf) == 4096 {
				if leaves[len(leaves)-1] == r.leafN {
					pair = [][]byte{keys[len(keys)-1], bytes.Clone(k)}
				}
			}
			if !seen[r.leafN] && len(r.leaf) == 4096 {
				seen[r.leafN] = true
				keys = append(keys, bytes.Clone(k))
				leaves = append(leaves, r.leafN)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 20 {
		t.Fatalf("the store has %d leaf pages of 8-byte keys: too few to test", len(keys))
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const ps = 4096
	// reads returns the pages read by Get of every key, each by a reader
	// of its own, all of transaction generation txid.
	reads := func(c *pageCache, txid int, keys [][]byte) int {
		t.Helper()
		f := &countingFile{f: bytes.NewReader(raw)}
		err := s.db.View(func(tx *bolt.Tx) error {
			for _, k := range keys {
				r := &pageReader{f: f, ps: ps, hwm: uint64(len(raw) / ps), txid: txid, cache: c}
				pb := readBucket(r, tx, []byte("b")).(*preadBucket)
				if g, w := pb.Get(k), tx.Bucket([]byte("b")).Get(k); !bytes.Equal(g, w) {
					return fmt.Errorf("Get(%x): %d bytes, bbolt %d", k, len(g), len(w))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return f.reads
	}
	key := keys[:1]
	for _, tc := range []struct {
		name     string
		maxBytes int64
		kept     bool
	}{
		{"default bound", 0, true},
		{"no leaf kept", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &pageCache{maxBytes: tc.maxBytes}
			first := reads(c, 5, key)
			if first < 2 {
				t.Fatalf("the first Get read %d pages: the bucket has no branch page", first)
			}
			for i := 2; i <= leafAdmit; i++ { // the leafAdmit-th read keeps it
				if n := reads(c, 5, key); n != 1 {
					t.Fatalf("read %d of the key: %d pages read, want its leaf alone (branch pages are kept)", i, n)
				}
			}
			want := 0
			if !tc.kept {
				want = 1
			}
			for i := range 3 {
				if n := reads(c, 5, key); n != want {
					t.Fatalf("Get %d after the leaf's read %d: %d pages read, want %d", i, leafAdmit, n, want)
				}
			}
			if n := reads(c, 4, key); n != first {
				t.Fatalf("a reader of an older generation read %d pages, want %d (no cached page)", n, first)
			}
			if n := reads(c, 5, key); n != want {
				t.Fatalf("after the older reader: %d pages read, want %d", n, want)
			}
			if n := reads(c, 6, key); n != first {
				t.Fatalf("a reader of a newer generation read %d pages, want %d (the cache started over)", n, first)
			}
		})
	}
	t.Run("one reader", func(t *testing.T) {
		// Two keys of one leaf, one after the other, by one reader: the
		// leaf is read once, whether the cache keeps leaves or not.
		if pair == nil {
			t.Fatal("no two keys of one leaf")
		}
		for _, max := range []int64{0, -1} {
			c := &pageCache{maxBytes: max}
			f := &countingFile{f: bytes.NewReader(raw)}
			err := s.db.View(func(tx *bolt.Tx) error {
				r := &pageReader{f: f, ps: ps, hwm: uint64(len(raw) / ps), txid: 9, cache: c}
				pb := readBucket(r, tx, []byte("b")).(*preadBucket)
				pb.Get(pair[0])
				before := f.reads
				if g, w := pb.Get(pair[1]), tx.Bucket([]byte("b")).Get(pair[1]); !bytes.Equal(g, w) {
					return fmt.Errorf("Get(%x): %d bytes, bbolt %d", pair[1], len(g), len(w))
				}
				if f.reads != before {
					return fmt.Errorf("leaf cache bound %d: the second key of the leaf read %d pages, want 0", max, f.reads-before)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("bound", func(t *testing.T) {
		// 12 leaves at distinct entries of the cache's read counts (4
		// entries a kept page), read leafAdmit times: all are offered.
		c := &pageCache{maxBytes: 8 * ps}
		var some [][]byte
		at := map[uint64]bool{}
		for i, k := range keys {
			if !at[leaves[i]%32] && len(some) < 12 {
				at[leaves[i]%32] = true
				some = append(some, k)
			}
		}
		if len(some) < 12 {
			t.Fatalf("%d leaves at distinct entries, want 12", len(some))
		}
		for range leafAdmit {
			reads(c, 7, some)
		}
		if len(c.slots) != 8 || len(c.leaves) != 8 {
			t.Fatalf("%d slots, %d pages kept; want 8", len(c.slots), len(c.leaves))
		}
		// The pages kept answer as the file does (compared inside reads),
		// and the last ones kept are read from the cache.
		if n := reads(c, 7, some); n != 12-8 {
			t.Fatalf("%d pages read for 12 leaves, 8 kept: want 4", n)
		}
		// Released (the store closed): nothing is kept any more.
		c.release()
		for range leafAdmit + 1 {
			if n := reads(c, 7, some); n != 12 {
				t.Fatalf("after release: %d pages read for 12 leaves, want 12", n)
			}
		}
	})
}
