package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// A query reads records and vectors by key from bbolt, and every read
// through bbolt's mapping counts in the process's resident set: the
// kernel maps up to 64 KiB of cached neighbours with every page a read
// faults in (bbolt's MADV_RANDOM does not stop that), so after a few
// hundred queries a querying process maps most of the store file
// (BENCHMARKS.md, "The querying process reads records by pread"). The
// query path reads them with pread instead (pageReader): the pages stay
// page cache and never enter the process's mapping. Writes and every
// other read stay on bbolt.
//
// bbolt is copy-on-write: no page reachable from an open read
// transaction's meta is reused while that transaction is open. A reader
// bound to an open read transaction that starts at the bucket's root
// page (Bucket.Root) and walks branch pages down to the leaf, reading
// each page from the file, reads exactly what the transaction would.

// branchPageFlag marks a bbolt branch page (the other layout constants
// are in rawpages.go).
const (
	branchPageFlag    = 0x01
	branchElementSize = 16 // pos, ksize uint32; child page id uint64
	maxPageDepth      = 64 // deeper than any tree bbolt builds: a cycle
)

// errPageFormat is a page that does not parse as the walk expects: a
// damaged file. The reader falls back to bbolt's read.
var errPageFormat = errors.New("hmo: store page")

// errLongRun is a page whose overflow pages make a run longer than
// maxPreadRun: bbolt reads that key (the run is not read into the heap,
// whatever a damaged header claims).
var errLongRun = errors.New("hmo: store page run too long to pread")

// maxPreadRun bounds the bytes of one page run (a page and its overflow
// pages) the reader reads, in bytes: 16 MiB, far above any record (64
// KiB of text by default). A variable for tests.
var maxPreadRun int64 = 16 << 20

// branchCache keeps the branch pages read by pread, for one transaction
// generation: every page in it was read while a read transaction of
// txid was open, so it is what every transaction of that txid reads. A
// reader of another txid neither uses nor fills it, and a newer txid
// starts it over. Safe for concurrent use.
type branchCache struct {
	mu    sync.Mutex
	txid  int
	pages map[uint64][]byte
}

// get returns the branch page id of generation txid, if it is cached.
func (c *branchCache) get(txid int, id uint64) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.txid != txid {
		return nil
	}
	return c.pages[id]
}

// put keeps the branch page id, read under a read transaction of txid.
func (c *branchCache) put(txid int, id uint64, p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case txid < c.txid:
		return // an older generation: not worth keeping
	case txid > c.txid || c.pages == nil:
		c.txid, c.pages = txid, map[uint64][]byte{}
	}
	c.pages[id] = p
}

// pageReader reads values of one read transaction's buckets by pread.
// Not safe for concurrent use (one per transaction and goroutine).
type pageReader struct {
	tx    *bolt.Tx
	f     io.ReaderAt
	ps    int64  // page size
	hwm   uint64 // the meta's high-water mark: no page of the tree at or past it
	txid  int
	cache *branchCache
	leaf  []byte // the last leaf page read (in buf), and its id
	leafN uint64
	buf   []byte
}

// newPageReader returns a reader of tx by pread, or nil when tx cannot be
// read that way (a write transaction: its pages are in memory).
func (d *boltDB) newPageReader(tx *bolt.Tx) *pageReader {
	if tx.Writable() {
		return nil
	}
	f := d.preadFile()
	if f == nil {
		return nil
	}
	ps := int64(tx.DB().Info().PageSize)
	if ps <= 0 {
		return nil
	}
	return &pageReader{tx: tx, f: f, ps: ps, hwm: uint64(tx.Size() / ps), txid: tx.ID(), cache: &d.branches}
}

// kvGetter is what reads a bucket's values by key: a bbolt bucket, or a
// preadBucket.
type kvGetter interface {
	Get(key []byte) []byte
}

// kvSeeker is a kvGetter that also finds the first key at or above a
// key, as a bbolt cursor's Seek does (storedVectors.next).
type kvSeeker interface {
	kvGetter
	Seek(key []byte) (k, v []byte)
}

// boltSeeker is a bbolt bucket as a kvSeeker.
type boltSeeker struct{ *bolt.Bucket }

// Seek is Cursor.Seek on a new cursor of the bucket.
func (b boltSeeker) Seek(key []byte) (k, v []byte) { return b.Cursor().Seek(key) }

// preadBucket returns a reader of tx's bucket name (nil when tx has no
// such bucket) that reads by pread when it can: through bbolt for a
// write transaction, an inline bucket, a store file that could not be
// opened, and from a damaged page on.
func (d *boltDB) preadBucket(tx *bolt.Tx, name []byte) kvSeeker {
	return readBucket(d.newPageReader(tx), tx, name)
}

// readBucket returns tx's bucket name read through r, or through bbolt
// when r is nil or the bucket is inline.
func readBucket(r *pageReader, tx *bolt.Tx, name []byte) kvSeeker {
	b := tx.Bucket(name)
	if b == nil {
		return nil
	}
	root := uint64(b.Root())
	if r == nil || root == 0 { // inline: its page is in its parent's value
		return boltSeeker{b}
	}
	return &preadBucket{r: r, b: b, root: root}
}

// preadBucket reads one bucket's values by pread. Its values are copies,
// valid after the transaction ends.
type preadBucket struct {
	r      *pageReader
	b      *bolt.Bucket
	root   uint64
	failed bool // a page did not parse: bbolt reads from here on
}

// Get returns the value of key as bbolt's Bucket.Get does (nil when the
// key is absent or names a nested bucket).
func (p *preadBucket) Get(key []byte) []byte {
	if !p.failed {
		v, err := p.r.get(p.root, key)
		if err == nil {
			return v
		}
		p.failed = !errors.Is(err, errLongRun)
	}
	return p.b.Get(key)
}

// Seek returns the first key at or above key and its value, as bbolt's
// Cursor.Seek does: nil, nil past the last key, a nil value for a nested
// bucket. Both are copies.
func (p *preadBucket) Seek(key []byte) (k, v []byte) {
	if !p.failed {
		k, v, err := p.r.seek(p.root, key)
		if err == nil {
			return k, v
		}
		p.failed = !errors.Is(err, errLongRun)
	}
	return p.b.Cursor().Seek(key)
}

// get walks from page root to the leaf that holds key and returns a copy
// of its value: nil when there is none, an error when a page is damaged.
func (r *pageReader) get(root uint64, key []byte) ([]byte, error) {
	id := root
	for range maxPageDepth {
		p, err := r.page(id)
		if err != nil {
			return nil, err
		}
		flags, count := binary.LittleEndian.Uint16(p[8:]), int(binary.LittleEndian.Uint16(p[10:]))
		switch flags {
		case branchPageFlag:
			if id, err = branchChild(p, count, key); err != nil {
				return nil, fmt.Errorf("%w %d: %v", errPageFormat, id, err)
			}
		case leafPageFlag:
			v, err := leafValue(p, count, key)
			if err != nil {
				return nil, fmt.Errorf("%w %d: %v", errPageFormat, id, err)
			}
			return bytes.Clone(v), nil
		default:
			return nil, fmt.Errorf("%w %d: flags %#x", errPageFormat, id, flags)
		}
	}
	return nil, fmt.Errorf("%w: a tree deeper than %d", errPageFormat, maxPageDepth)
}

// seek walks from page root to the first key at or above key, and
// returns copies of it and its value (nil for a nested bucket); nil, nil
// when every key is below it. An error when a page is damaged.
func (r *pageReader) seek(root uint64, key []byte) (k, v []byte, err error) {
	type step struct {
		p         []byte // a branch page
		at, count int    // the child descended into, of count
	}
	var stack []step
	id, first := root, false // first: the leftmost key under id, not a search
	for range 4 * maxPageDepth {
		p, err := r.page(id)
		if err != nil {
			return nil, nil, err
		}
		h := binary.LittleEndian
		flags, count := h.Uint16(p[8:]), int(h.Uint16(p[10:]))
		switch flags {
		case branchPageFlag:
			if count == 0 || pageHeaderSize+count*branchElementSize > len(p) {
				return nil, nil, fmt.Errorf("%w %d: branch of %d elements", errPageFormat, id, count)
			}
			i := 0
			if !first {
				if i, err = branchIndex(p, count, key); err != nil {
					return nil, nil, fmt.Errorf("%w %d: %v", errPageFormat, id, err)
				}
			}
			stack = append(stack, step{p, i, count})
			id = h.Uint64(p[pageHeaderSize+i*branchElementSize+8:])
			if len(stack) > maxPageDepth {
				return nil, nil, fmt.Errorf("%w: a tree deeper than %d", errPageFormat, maxPageDepth)
			}
			continue
		case leafPageFlag:
			if pageHeaderSize+count*leafElementSize > len(p) {
				return nil, nil, fmt.Errorf("%w %d: leaf of %d elements", errPageFormat, id, count)
			}
			i := 0
			if !first {
				if i, _, err = searchPage(count, leafKeyAt(p), key); err != nil {
					return nil, nil, fmt.Errorf("%w %d: %v", errPageFormat, id, err)
				}
			}
			if i < count {
				at := pageHeaderSize + i*leafElementSize
				flags, pos, ksize, vsize := h.Uint32(p[at:]), int(h.Uint32(p[at+4:])), int(h.Uint32(p[at+8:])), int(h.Uint32(p[at+12:]))
				kb, ok := pageKey(p, at, pos, ksize)
				vb, vok := pageKey(p, at, pos+ksize, vsize)
				if !ok || !vok || pos+ksize < pos {
					return nil, nil, fmt.Errorf("%w %d: element past the page", errPageFormat, id)
				}
				if flags&bucketLeafFlag != 0 {
					return bytes.Clone(kb), nil, nil
				}
				return bytes.Clone(kb), bytes.Clone(vb), nil
			}
		default:
			return nil, nil, fmt.Errorf("%w %d: flags %#x", errPageFormat, id, flags)
		}
		// Past this leaf's last key: the leftmost key of the next subtree.
		for len(stack) > 0 && stack[len(stack)-1].at+1 >= stack[len(stack)-1].count {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			return nil, nil, nil
		}
		top := &stack[len(stack)-1]
		top.at++
		id, first = binary.LittleEndian.Uint64(top.p[pageHeaderSize+top.at*branchElementSize+8:]), true
	}
	return nil, nil, fmt.Errorf("%w: a walk longer than %d pages", errPageFormat, 4*maxPageDepth)
}

// page returns page id (with its overflow pages) as the file holds it:
// from the reader's last leaf, the branch cache, or a pread.
func (r *pageReader) page(id uint64) ([]byte, error) {
	if id < 2 || id >= r.hwm {
		return nil, fmt.Errorf("%w: page %d out of range [2, %d)", errPageFormat, id, r.hwm)
	}
	if r.leaf != nil && r.leafN == id {
		return r.leaf, nil
	}
	p := r.cache.get(r.txid, id)
	if p != nil {
		return p, nil
	}
	// A leaf is read into the reader's buffer (the values returned are
	// copies), a branch page into its own, which the cache keeps.
	if cap(r.buf) < int(r.ps) {
		r.buf = make([]byte, r.ps)
	}
	r.leaf, p = nil, r.buf[:r.ps]
	if _, err := r.f.ReadAt(p, int64(id)*r.ps); err != nil {
		return nil, err
	}
	h := binary.LittleEndian
	if got := h.Uint64(p); got != id {
		return nil, fmt.Errorf("%w %d: its header says %d", errPageFormat, id, got)
	}
	if over := uint64(h.Uint32(p[12:])); over > 0 {
		if over >= r.hwm-id {
			return nil, fmt.Errorf("%w %d: %d overflow pages past the high-water mark", errPageFormat, id, over)
		}
		n := int64(over+1) * r.ps
		if n > maxPreadRun {
			return nil, fmt.Errorf("%w: page %d and %d overflow pages", errLongRun, id, over)
		}
		if int64(cap(r.buf)) < n {
			r.buf = append(r.buf[:r.ps], make([]byte, n-r.ps)...)
		}
		p = r.buf[:n]
		if _, err := r.f.ReadAt(p[r.ps:], int64(id+1)*r.ps); err != nil {
			return nil, err
		}
	}
	if h.Uint16(p[8:]) == branchPageFlag {
		p = bytes.Clone(p)
		r.cache.put(r.txid, id, p)
	} else {
		r.leaf, r.leafN = p, id
	}
	return p, nil
}

// pageKey returns the key of the element at at, which names it at
// offset pos from itself with ksize bytes.
func pageKey(p []byte, at, pos, ksize int) ([]byte, bool) {
	k := at + pos
	if pos < 0 || ksize < 0 || k < at || k+ksize > len(p) || k+ksize < k {
		return nil, false
	}
	return p[k : k+ksize], true
}

// branchChild returns the child of branch page p to descend into for
// key, as bbolt's cursor chooses it: the element whose key equals key,
// else the last element below key, else the first.
func branchChild(p []byte, count int, key []byte) (uint64, error) {
	if count == 0 || pageHeaderSize+count*branchElementSize > len(p) {
		return 0, fmt.Errorf("branch of %d elements", count)
	}
	i, err := branchIndex(p, count, key)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(p[pageHeaderSize+i*branchElementSize+8:]), nil
}

// branchIndex is the index of the element branchChild descends into.
func branchIndex(p []byte, count int, key []byte) (int, error) {
	h := binary.LittleEndian
	i, exact, err := searchPage(count, func(i int) ([]byte, bool) {
		at := pageHeaderSize + i*branchElementSize
		return pageKey(p, at, int(h.Uint32(p[at:])), int(h.Uint32(p[at+4:])))
	}, key)
	if err != nil {
		return 0, err
	}
	if !exact && i > 0 {
		i--
	}
	return i, nil
}

// leafKeyAt returns the key reader of leaf page p for searchPage.
func leafKeyAt(p []byte) func(int) ([]byte, bool) {
	return func(i int) ([]byte, bool) {
		at := pageHeaderSize + i*leafElementSize
		h := binary.LittleEndian
		return pageKey(p, at, int(h.Uint32(p[at+4:])), int(h.Uint32(p[at+8:])))
	}
}

// leafValue returns the value of key on leaf page p: nil when the page
// has no such key or it names a nested bucket.
func leafValue(p []byte, count int, key []byte) ([]byte, error) {
	if pageHeaderSize+count*leafElementSize > len(p) {
		return nil, fmt.Errorf("leaf of %d elements", count)
	}
	h := binary.LittleEndian
	i, exact, err := searchPage(count, leafKeyAt(p), key)
	if err != nil || !exact {
		return nil, err
	}
	at := pageHeaderSize + i*leafElementSize
	if h.Uint32(p[at:])&bucketLeafFlag != 0 {
		return nil, nil
	}
	pos, ksize, vsize := int(h.Uint32(p[at+4:])), int(h.Uint32(p[at+8:])), int(h.Uint32(p[at+12:]))
	v, ok := pageKey(p, at, pos+ksize, vsize)
	if !ok || pos+ksize < pos {
		return nil, errors.New("value past the page")
	}
	return v, nil
}

// searchPage returns the first of count sorted keys (key(i)) at or above
// key, and whether it equals key: bbolt's sort.Search over a page.
func searchPage(count int, keyAt func(int) ([]byte, bool), key []byte) (i int, exact bool, err error) {
	lo, hi := 0, count
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		k, ok := keyAt(m)
		if !ok {
			return 0, false, errors.New("key past the page")
		}
		switch c := bytes.Compare(k, key); {
		case c < 0:
			lo = m + 1
		default:
			if c == 0 {
				exact = true
			}
			hi = m
		}
	}
	return lo, exact, nil
}
