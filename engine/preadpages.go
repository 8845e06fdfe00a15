package engine

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/internal/offheap"
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

// pageCache keeps pages read by pread, for one transaction generation:
// every page in it was read while a read transaction of txid was open,
// so it is what every transaction of that txid reads (bbolt reuses no
// page reachable from an open reader's meta, and a generation's pages
// change only by a commit, which makes a newer generation). A reader of
// another txid neither uses nor fills it, and a newer txid starts it
// over. Safe for concurrent use.
//
// It keeps every branch page read, parsed (branchPage: at 100K records
// 84 pages, at 1M 775), and a bounded number of leaf pages: a query
// reads about 300 leaves of the records and vectors buckets, and most
// of them were read by an earlier query of the process (BENCHMARKS.md,
// "The 100K hybrid query: leaf pages kept"). A leaf is kept at its
// leafAdmit-th read in the generation, so leaves read seldom cost no
// copy; a full cache evicts by the clock algorithm (a page read since
// the hand last passed it stays). The leaves live in one block of
// memory outside the Go heap (leafMemory), copied in and out under the
// lock: no reader holds a kept page, so an evicted page's place is
// reused at once.
type pageCache struct {
	mu       sync.Mutex
	txid     int
	branches map[uint64]*branchPage
	leaves   map[uint64]int // page id → its slot
	slots    []leafSlot     // slot i's page is mem's i-th page
	mem      *leafMemory
	ps       int // the size of a kept page
	hand     int
	seen     []seenLeaf // leaves read and not kept, at id % len(seen)

	// maxBytes bounds the leaf pages kept, in bytes of pages: 0 is
	// defaultLeafCacheBytes, a negative value keeps none.
	maxBytes int64
}

// defaultLeafCacheBytes is pageCache's bound on the leaf pages it keeps,
// in bytes: 4 MiB, 1,024 pages of 4 KiB. It serves about a fifth of a
// 100K hybrid query's reads (312 preads a query become 246); a larger
// one would serve more, but the anonymous memory of a 1M querying
// process has about 8 MB below its 96 MB line.
const defaultLeafCacheBytes = 4 << 20

// leafAdmit is the read of a leaf page, in its generation, at which the
// cache keeps it: the third. Most leaves a query reads are read by few
// queries; a page kept and evicted before its next read costs a copy
// and saves nothing. Counted in a direct-mapped table (4 entries a kept
// page), where another page at the same entry starts the count over:
// only pages read again soon reach the count. On the 100K workload's
// reads, against keeping a page at its second read, it keeps less than
// half as many pages for 6% fewer hits.
const leafAdmit = 3

// seenLeaf counts the reads of a leaf page not kept.
type seenLeaf struct {
	id    uint64
	reads uint32
}

// leafSlot is one kept leaf page's id and its clock bit.
type leafSlot struct {
	id  uint64
	ref bool
}

// leafMemory is the block the kept leaf pages live in: an anonymous
// mapping where the system has them, which the garbage collector
// neither scans nor counts in its heap goal (pages kept on the heap
// would cost twice their size), else heap memory. A mapping is released
// by release, or when the block is no longer reachable.
type leafMemory struct {
	b       []byte
	cleanup runtime.Cleanup
	mapped  bool
}

func newLeafMemory(n int) *leafMemory {
	m := &leafMemory{}
	if b, err := offheap.Map(n); err == nil {
		m.b, m.mapped = b, true
		m.cleanup = runtime.AddCleanup(m, func(b []byte) { _ = offheap.Unmap(b) }, b)
	} else {
		m.b = make([]byte, n)
	}
	return m
}

// release unmaps the block; nothing may use it after.
func (m *leafMemory) release() {
	if m.mapped {
		m.cleanup.Stop()
		_ = offheap.Unmap(m.b)
	}
	m.b, m.mapped = nil, false
}

// get returns page id of generation txid, if it is cached: a branch
// page parsed (dst untouched), or true when it copied the leaf page into
// dst (of the kept page's size).
func (c *pageCache) get(txid int, id uint64, dst []byte) (*branchPage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.txid != txid {
		return nil, false
	}
	if b := c.branches[id]; b != nil {
		return b, false
	}
	if i, ok := c.leaves[id]; ok && len(dst) == c.ps {
		c.slots[i].ref = true
		copy(dst, c.mem.b[i*c.ps:(i+1)*c.ps])
		return nil, true
	}
	return nil, false
}

// branch returns the branch page id kept parsed for generation txid, or
// nil.
func (c *pageCache) branch(txid int, id uint64) *branchPage {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.txid != txid {
		return nil
	}
	return c.branches[id]
}

// value is get for a reader of key: a branch page parsed, or, when the
// leaf page id is kept, key's value on it (nil when it has none, as
// leafValue finds it) copied into dst (of at least the kept page's
// size) and true, with the error leafValue reports for the page.
// Copying the value alone, not the page, keeps a hit's copy to the
// bytes asked for.
func (c *pageCache) value(txid int, id uint64, key, dst []byte) (*branchPage, []byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.txid != txid {
		return nil, nil, false, nil
	}
	if b := c.branches[id]; b != nil {
		return b, nil, false, nil
	}
	i, ok := c.leaves[id]
	if !ok || len(dst) < c.ps {
		return nil, nil, false, nil
	}
	c.slots[i].ref = true
	p := c.mem.b[i*c.ps : (i+1)*c.ps]
	v, err := leafValue(p, int(binary.LittleEndian.Uint16(p[10:])), key)
	if v == nil || err != nil {
		return nil, nil, true, err
	}
	return nil, dst[:copy(dst, v)], true, nil
}

// generation makes txid the cache's generation, starting it over when
// txid is newer, and reports whether pages read under txid may be kept.
// c.mu is held.
func (c *pageCache) generation(txid int) bool {
	switch {
	case txid < c.txid:
		return false // an older generation: not worth keeping
	case txid > c.txid || c.branches == nil:
		c.txid, c.branches = txid, map[uint64]*branchPage{}
		clear(c.leaves)
		c.slots, c.hand = c.slots[:0], 0
		clear(c.seen)
	}
	return true
}

// putBranch keeps the branch page id, read under a read transaction of
// txid.
func (c *pageCache) putBranch(txid int, id uint64, b *branchPage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.generation(txid) {
		c.branches[id] = b
	}
}

// putLeaf offers the leaf page id (one page, no overflow), read under a
// read transaction of txid into p: the cache keeps a copy of it at its
// leafAdmit-th read.
func (c *pageCache) putLeaf(txid int, id uint64, p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.maxBytes
	if n == 0 {
		n = defaultLeafCacheBytes
	}
	most := int(n / int64(len(p)))
	if most <= 0 || c.mem == nil && c.ps != 0 || !c.generation(txid) {
		return // none kept, or released
	}
	if c.ps == 0 {
		c.ps = len(p)
		c.mem = newLeafMemory(most * c.ps)
		c.leaves = make(map[uint64]int, most)
		c.seen = make([]seenLeaf, 4*most)
	}
	if len(p) != c.ps {
		return
	}
	if _, ok := c.leaves[id]; ok {
		return // another reader kept it meanwhile
	}
	seen := &c.seen[id%uint64(len(c.seen))]
	if seen.id != id {
		*seen = seenLeaf{id: id}
	}
	if seen.reads++; seen.reads < leafAdmit {
		return
	}
	*seen = seenLeaf{}
	i := len(c.slots)
	if i < len(c.mem.b)/c.ps {
		c.slots = append(c.slots, leafSlot{id: id})
	} else {
		for c.slots[c.hand].ref {
			c.slots[c.hand].ref = false
			c.hand = (c.hand + 1) % len(c.slots)
		}
		i = c.hand
		delete(c.leaves, c.slots[i].id)
		c.slots[i] = leafSlot{id: id}
		c.hand = (c.hand + 1) % len(c.slots)
	}
	copy(c.mem.b[i*c.ps:(i+1)*c.ps], p)
	c.leaves[id] = i
}

// release gives back the leaf pages' memory; the cache keeps no leaf
// after it. No reader may be in use.
func (c *pageCache) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mem != nil {
		c.mem.release()
		c.mem = nil
	}
	clear(c.leaves)
	c.slots = nil
	if c.ps == 0 {
		c.ps = -1 // none is made after
	}
}

// branchPage is a branch page parsed: its elements' keys and children.
// Read-only once made.
type branchPage struct {
	keys8 []uint64 // the keys as big-endian numbers, when every key is 8 bytes
	keys  [][]byte // else the keys
	kids  []uint64
}

// parseBranch parses branch page p (with its header) of count elements.
func parseBranch(p []byte, count int) (*branchPage, error) {
	if count == 0 || pageHeaderSize+count*branchElementSize > len(p) {
		return nil, fmt.Errorf("branch of %d elements", count)
	}
	h := binary.LittleEndian
	b := &branchPage{kids: make([]uint64, count)}
	all8 := true
	for i := range count {
		at := pageHeaderSize + i*branchElementSize
		b.kids[i] = h.Uint64(p[at+8:])
		k, ok := pageKey(p, at, int(h.Uint32(p[at:])), int(h.Uint32(p[at+4:])))
		if !ok {
			return nil, errors.New("key past the page")
		}
		all8 = all8 && len(k) == 8
	}
	if all8 {
		b.keys8 = make([]uint64, count)
	} else {
		b.keys = make([][]byte, count)
		p = bytes.Clone(p) // the keys' backing, not the reader's buffer
	}
	for i := range count {
		at := pageHeaderSize + i*branchElementSize
		k, _ := pageKey(p, at, int(h.Uint32(p[at:])), int(h.Uint32(p[at+4:])))
		if all8 {
			b.keys8[i] = binary.BigEndian.Uint64(k)
		} else {
			b.keys[i] = k
		}
	}
	return b, nil
}

// index is the element to descend into for key, as bbolt's cursor
// chooses it: the element whose key equals key, else the last element
// below key, else the first.
func (b *branchPage) index(key []byte) int {
	n := len(b.kids)
	lo, hi, exact := 0, n, false
	if b.keys8 != nil && len(key) == 8 {
		k := binary.BigEndian.Uint64(key)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if b.keys8[m] < k {
				lo = m + 1
			} else {
				exact, hi = exact || b.keys8[m] == k, m
			}
		}
	} else {
		var k8 [8]byte
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			km := k8[:]
			if b.keys8 != nil {
				binary.BigEndian.PutUint64(km, b.keys8[m])
			} else {
				km = b.keys[m]
			}
			if c := bytes.Compare(km, key); c < 0 {
				lo = m + 1
			} else {
				exact, hi = exact || c == 0, m
			}
		}
	}
	if !exact && lo > 0 {
		lo--
	}
	return lo
}

// pageReader reads values of one read transaction's buckets by pread.
// Not safe for concurrent use (one per transaction and goroutine).
type pageReader struct {
	tx *bolt.Tx
	f  io.ReaderAt
	fd int // f's descriptor, when direct
	// direct says f is the store file and fd its descriptor: the reads
	// ask not to wait (readCached) and willNeed advises it.
	direct bool
	ps     int64  // page size
	hwm    uint64 // the meta's high-water mark: no page of the tree at or past it
	txid   int
	cache  *pageCache
	// onCold, when not nil, runs at the first leaf page read from the
	// disk, and is then dropped (whenCold).
	onCold func()
	leaf   []byte // the last leaf page read (in buf), and its id
	leafN  uint64
	buf    []byte
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
	r := pageReaders.Get().(*pageReader)
	*r = pageReader{tx: tx, f: f, fd: d.preadFd, direct: d.preadFd >= 0, ps: ps, hwm: uint64(tx.Size() / ps), txid: tx.ID(), cache: &d.pages, buf: r.buf[:0]}
	return r
}

// pageReaders holds the readers releaseBucket gives back, each with its
// page buffer, for the next newPageReader: a question's record reads
// then allocate neither.
var pageReaders = sync.Pool{New: func() any { return new(pageReader) }}

// maxKeptPageBuf is the largest page buffer a released reader keeps (a
// record with overflow pages grows it to the run read).
const maxKeptPageBuf = 64 << 10

// releaseBucket gives the reader of b, when b reads by pread, back for
// reuse with its page buffer. No value peeked from b may be read after
// (Get's are copies): for a transaction's function that is done with b
// (its values decoded), at its end. b itself reads through bbolt after,
// as from a damaged page on.
func releaseBucket(b kvSeeker) {
	p, ok := b.(*preadBucket)
	if !ok || p.r == nil {
		return
	}
	r := p.r
	p.r, p.failed = nil, true
	buf := r.buf[:0]
	if cap(buf) > maxKeptPageBuf {
		buf = nil
	}
	*r = pageReader{buf: buf} // no transaction, file or page kept
	pageReaders.Put(r)
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
// key is absent or names a nested bucket), a copy.
func (p *preadBucket) Get(key []byte) []byte {
	return bytes.Clone(p.peek(key))
}

// peek is Get without the copy: the value is valid until the next read
// of p's reader (or, read through bbolt, until the transaction ends).
// For a caller that decodes it at once.
func (p *preadBucket) peek(key []byte) []byte {
	if !p.failed {
		v, err := p.r.get(p.root, key)
		if err == nil {
			return v
		}
		p.failed = !errors.Is(err, errLongRun)
	}
	return p.b.Get(key)
}

// peekValue returns the value of key in g without a copy when g can give
// it (preadBucket.peek): valid until g's next read; g.Get otherwise.
func peekValue(g kvGetter, key []byte) []byte {
	if p, ok := g.(*preadBucket); ok {
		return p.peek(key)
	}
	return g.Get(key)
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

// get walks from page root to the leaf that holds key and returns its
// value, valid until r's next read: nil when there is none, an error
// when a page is damaged.
func (r *pageReader) get(root uint64, key []byte) ([]byte, error) {
	id := root
	for range maxPageDepth {
		var br *branchPage
		var p []byte
		var err error
		if id < 2 || id >= r.hwm || r.leaf != nil && r.leafN == id {
			br, p, err = r.page(id) // out of range, or the last leaf
		} else {
			// A branch page or a leaf kept answers from the cache (a
			// leaf's value copied alone); else the page is read.
			if cap(r.buf) < int(r.ps) {
				r.buf = make([]byte, r.ps)
			}
			b, v, kept, verr := r.cache.value(r.txid, id, key, r.buf[:r.ps])
			switch {
			case b != nil:
				br = b
			case kept:
				r.leaf, r.leafN = nil, 0 // the buffer holds the value, not the page
				if verr != nil {
					return nil, fmt.Errorf("%w %d: %v", errPageFormat, id, verr)
				}
				return v, nil
			default:
				br, p, err = r.read(id)
			}
		}
		if err != nil {
			return nil, err
		}
		if br != nil {
			id = br.kids[br.index(key)]
			continue
		}
		v, err := leafValue(p, int(binary.LittleEndian.Uint16(p[10:])), key)
		if err != nil {
			return nil, fmt.Errorf("%w %d: %v", errPageFormat, id, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("%w: a tree deeper than %d", errPageFormat, maxPageDepth)
}

// seek walks from page root to the first key at or above key, and
// returns copies of it and its value (nil for a nested bucket); nil, nil
// when every key is below it. An error when a page is damaged.
func (r *pageReader) seek(root uint64, key []byte) (k, v []byte, err error) {
	type step struct {
		b  *branchPage
		at int // the child descended into
	}
	var stack []step
	id, first := root, false // first: the leftmost key under id, not a search
	for range 4 * maxPageDepth {
		br, p, err := r.page(id)
		if err != nil {
			return nil, nil, err
		}
		if br != nil {
			i := 0
			if !first {
				i = br.index(key)
			}
			stack = append(stack, step{br, i})
			id = br.kids[i]
			if len(stack) > maxPageDepth {
				return nil, nil, fmt.Errorf("%w: a tree deeper than %d", errPageFormat, maxPageDepth)
			}
			continue
		}
		h := binary.LittleEndian
		count := int(h.Uint16(p[10:]))
		if pageHeaderSize+count*leafElementSize > len(p) {
			return nil, nil, fmt.Errorf("%w %d: leaf of %d elements", errPageFormat, id, count)
		}
		i := 0
		if !first {
			if i, _, err = searchLeaf(p, count, key); err != nil {
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
		// Past this leaf's last key: the leftmost key of the next subtree.
		for len(stack) > 0 && stack[len(stack)-1].at+1 >= len(stack[len(stack)-1].b.kids) {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			return nil, nil, nil
		}
		top := &stack[len(stack)-1]
		top.at++
		id, first = top.b.kids[top.at], true
	}
	return nil, nil, fmt.Errorf("%w: a walk longer than %d pages", errPageFormat, 4*maxPageDepth)
}

// page returns page id as the file holds it: a branch page parsed, or a
// leaf page's bytes with its overflow pages, valid until r's next read.
// It comes from the reader's last leaf, the cache, or a pread; any other
// kind of page is an error.
func (r *pageReader) page(id uint64) (*branchPage, []byte, error) {
	if id < 2 || id >= r.hwm {
		return nil, nil, fmt.Errorf("%w: page %d out of range [2, %d)", errPageFormat, id, r.hwm)
	}
	if r.leaf != nil && r.leafN == id {
		return nil, r.leaf, nil
	}
	// A page is read into the reader's buffer, from the cache or by
	// pread; the cache keeps a branch page parsed.
	if cap(r.buf) < int(r.ps) {
		r.buf = make([]byte, r.ps)
	}
	p := r.buf[:r.ps]
	b, kept := r.cache.get(r.txid, id, p) // a branch page leaves the buffer as it was
	if b != nil {
		return b, nil, nil
	}
	if kept {
		r.leaf, r.leafN = p, id
		return nil, p, nil
	}
	return r.read(id)
}

// read is page for a page that is neither the last leaf nor kept in the
// cache: it reads it by pread (into the reader's buffer), and offers it
// to the cache.
func (r *pageReader) read(id uint64) (*branchPage, []byte, error) {
	if cap(r.buf) < int(r.ps) {
		r.buf = make([]byte, r.ps)
	}
	p := r.buf[:r.ps]
	r.leaf, r.leafN = nil, 0 // the buffer is read over
	done, cold := false, false
	if r.direct {
		done, cold = readCachedFunc(r.fd, p, int64(id)*r.ps)
	}
	if !done {
		if _, err := r.f.ReadAt(p, int64(id)*r.ps); err != nil {
			return nil, nil, err
		}
	}
	h := binary.LittleEndian
	if got := h.Uint64(p); got != id {
		return nil, nil, fmt.Errorf("%w %d: its header says %d", errPageFormat, id, got)
	}
	flags, count, over := h.Uint16(p[8:]), int(h.Uint16(p[10:])), uint64(h.Uint32(p[12:]))
	if flags != branchPageFlag && flags != leafPageFlag {
		return nil, nil, fmt.Errorf("%w %d: flags %#x", errPageFormat, id, flags)
	}
	if over > 0 {
		if over >= r.hwm-id {
			return nil, nil, fmt.Errorf("%w %d: %d overflow pages past the high-water mark", errPageFormat, id, over)
		}
		n := int64(over+1) * r.ps
		if n > maxPreadRun {
			return nil, nil, fmt.Errorf("%w: page %d and %d overflow pages", errLongRun, id, over)
		}
		if int64(cap(r.buf)) < n {
			r.buf = append(r.buf[:r.ps], make([]byte, n-r.ps)...)
		}
		p = r.buf[:n]
		if _, err := r.f.ReadAt(p[r.ps:], int64(id+1)*r.ps); err != nil {
			return nil, nil, err
		}
	}
	if flags == branchPageFlag {
		b, err := parseBranch(p, count)
		if err != nil {
			return nil, nil, fmt.Errorf("%w %d: %v", errPageFormat, id, err)
		}
		r.cache.putBranch(r.txid, id, b)
		return b, nil, nil
	}
	if over == 0 {
		r.cache.putLeaf(r.txid, id, p)
	}
	r.leaf, r.leafN = p, id
	if cold && r.onCold != nil {
		// The path's branch pages are kept by now: the batch's advice
		// finds the leaves under them.
		f := r.onCold
		r.onCold = nil
		f()
	}
	return nil, p, nil
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

// searchLeaf returns the first key of leaf page p (count elements, which
// fit the page) at or above key, and whether it equals key: bbolt's
// sort.Search over a page. An 8-byte key is compared with the page's
// 8-byte keys as a number (the records' and vectors' keys), others as
// bytes.
func searchLeaf(p []byte, count int, key []byte) (i int, exact bool, err error) {
	h := binary.LittleEndian
	var k8 uint64
	if len(key) == 8 {
		k8 = binary.BigEndian.Uint64(key)
	}
	lo, hi := 0, count
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		at := pageHeaderSize + m*leafElementSize
		k, ok := pageKey(p, at, int(h.Uint32(p[at+4:])), int(h.Uint32(p[at+8:])))
		if !ok {
			return 0, false, errors.New("key past the page")
		}
		var c int
		if len(k) == 8 && len(key) == 8 {
			c = cmp.Compare(binary.BigEndian.Uint64(k), k8)
		} else {
			c = bytes.Compare(k, key)
		}
		if c < 0 {
			lo = m + 1
		} else {
			exact, hi = exact || c == 0, m
		}
	}
	return lo, exact, nil
}

// leafValue returns the value of key on leaf page p: nil when the page
// has no such key or it names a nested bucket.
func leafValue(p []byte, count int, key []byte) ([]byte, error) {
	if pageHeaderSize+count*leafElementSize > len(p) {
		return nil, fmt.Errorf("leaf of %d elements", count)
	}
	h := binary.LittleEndian
	i, exact, err := searchLeaf(p, count, key)
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
