package fts

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"unsafe"

	"github.com/blevesearch/bleve/v2/index/scorch"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// The text search reads a word's postings in one scorch segment as
// arrays: the documents that hold the word in any scored field, ascending,
// and for each the field, frequency and field length, decoded from the
// segment once and kept in a cache bounded in bytes
// (Options.PostingsCache). Bleve's own iterator decodes a posting's
// frequency and norm at every visit and has no skip data for them, so a
// seek reads every posting up to its target, and a word is three lists
// (one per field) to merge; over one array a seek is a galloping search,
// and a visit two loads.
//
// A segment never changes once it is in a snapshot: documents deleted
// or replaced later are marked in the snapshot's deleted set of the
// segment, and a merge writes a new segment under a new id. The arrays
// hold every posting of the segment, deleted or not; the search applies
// the deleted set of the snapshot it reads. Segment ids are unique for
// the life of a scorch index (a persisted in-memory segment keeps its
// id and its content), and the cache is the Index's own.

// postings are one word's postings in the scored fields of one segment.
type postings struct {
	n int // documents
	// The documents, segment-local numbers, ascending: document i is
	// base[i>>blockShift] + lo[i], or docs32[i] in a list where the
	// documents of some block of blockLen span more than lo holds.
	base   []uint32
	lo     []uint16
	docs32 []uint32
	// enc is each document's posting: the field, frequency and field
	// length when the document holds the word in one field with values
	// that fit (the layout below), and otherwise encEscape: the document
	// is then listed in esc (ascending), and its fields are the same
	// place of multi.
	enc   []uint16
	esc   []uint32
	multi []multiPosting
	// count is the postings in each field.
	count [nFields]uint32
	// front is, per field, the postings no other one beats on both
	// frequency (higher) and length (lower): the best normalised term
	// frequency of the field is one of theirs, whatever the average
	// lengths (wordCursor.setBound).
	front [nFields][]fieldPosting
	// mem, for a list the cache keeps outside the Go heap (offHeap), is
	// the mapping its arrays live in. refs counts the searches using the
	// list, and gone is set once the cache dropped it: the mapping is
	// released when both say no one can read it (postingsCache.free).
	// Both are guarded by the cache's mu.
	mem  []byte
	refs int32
	gone bool
}

// offHeapMin is the size in bytes from which a cached list is kept
// outside the Go heap: the heap goal is twice the live heap, so a list
// kept on it costs twice its size; a mapping costs its size rounded up
// to pages. A variable for the tests.
var offHeapMin = 8 << 10

// offHeap returns a copy of p whose arrays live in an anonymous mapping,
// or p itself when it is small or there is no mapping to be had.
func (p *postings) offHeap() *postings {
	sz := p.arrayBytes()
	if sz < offHeapMin || p.n == 0 || p.mem != nil {
		return p
	}
	mem, err := mapAnon(sz)
	if err != nil {
		return p
	}
	q := *p
	q.mem, q.refs, q.gone = mem, 0, false
	off := 0
	q.base = carve(mem, &off, p.base)
	q.docs32 = carve(mem, &off, p.docs32)
	q.esc = carve(mem, &off, p.esc)
	q.multi = carve(mem, &off, p.multi)
	q.lo = carve(mem, &off, p.lo)
	q.enc = carve(mem, &off, p.enc)
	return &q
}

// carve copies src into mem at *off (aligned for T) and returns the
// copy, nil for a nil src.
func carve[T any](mem []byte, off *int, src []T) []T {
	if src == nil {
		return nil
	}
	var zero T
	size, align := int(unsafe.Sizeof(zero)), int(unsafe.Alignof(zero))
	*off = (*off + align - 1) / align * align
	if len(src) == 0 {
		return []T{}
	}
	dst := unsafe.Slice((*T)(unsafe.Pointer(&mem[*off])), len(src))
	*off += size * len(src)
	copy(dst, src)
	return dst
}

// multiPosting is a document's postings in every field, and the fields
// that hold the word (a bit each).
type multiPosting struct {
	f  [nFields]fieldPosting
	in uint8
}

type fieldPosting struct{ tf, dl uint32 }

// The layout of enc: field (2 bits), frequency (3), length (11).
const (
	encField  = 14 // shift of the field
	encTF     = 11 // shift of the frequency
	encMaxTF  = 1<<(encField-encTF) - 1
	encMaxDL  = 1<<encTF - 1
	encEscape = 3 << encField // field 3: see esc
)

// blockLen documents share a base; blockShift is its log2.
const (
	blockShift = 7
	blockLen   = 1 << blockShift
)

// doc is document i's number.
func (p *postings) doc(i int) uint32 {
	if p.docs32 != nil {
		return p.docs32[i]
	}
	return p.base[i>>blockShift] + uint32(p.lo[i])
}

// seek returns the first index i >= from of a document numbered v or
// more, p.n if none: a galloping search.
func (p *postings) seek(from int, v uint32) int {
	if p.docs32 != nil {
		return gallop(p.docs32, from, v)
	}
	if from >= p.n || p.doc(from) >= v {
		return from
	}
	// The last block from from's on whose base is v or less: the
	// documents after it are above v.
	b := gallop(p.base, from>>blockShift+1, v+1) - 1
	lo, hi := max(from, b<<blockShift), min(p.n, (b+1)<<blockShift)
	if v-p.base[b] > math.MaxUint16 {
		return hi
	}
	t := uint16(v - p.base[b])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p.lo[m] < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// multiAt is the fields of document i, which enc escapes.
func (p *postings) multiAt(i int) *multiPosting {
	j, _ := slices.BinarySearch(p.esc, uint32(i))
	return &p.multi[j]
}

// at returns the word's frequency and length of field f in document i
// of p, 0 frequency when it is not there.
func (p *postings) at(i, f int) fieldPosting {
	e := p.enc[i]
	if e&encEscape == encEscape {
		return p.multiAt(i).f[f]
	}
	if int(e>>encField) != f {
		return fieldPosting{}
	}
	return fieldPosting{tf: uint32(e >> encTF & encMaxTF), dl: uint32(e & encMaxDL)}
}

// inField reports whether document i holds the word in field f (with a
// frequency that may be 0).
func (p *postings) inField(i, f int) bool {
	e := p.enc[i]
	if e&encEscape == encEscape {
		return p.multiAt(i).in&(1<<f) != 0
	}
	return int(e>>encField) == f
}

// bytes is the memory p holds, for the cache's bound.
func (p *postings) bytes() int64 {
	if p.mem != nil {
		return roundPages(len(p.mem)) + p.frontBytes() + postingsOverhead
	}
	n := 4*(cap(p.base)+cap(p.docs32)+cap(p.esc)) + 2*(cap(p.lo)+cap(p.enc)) + 28*cap(p.multi)
	return int64(n) + p.frontBytes() + postingsOverhead
}

func (p *postings) frontBytes() int64 {
	n := 0
	for _, fr := range p.front {
		n += 8 * cap(fr)
	}
	return int64(n)
}

// arrayBytes is the size of p's arrays, as offHeap maps them.
func (p *postings) arrayBytes() int {
	return 4*(len(p.base)+len(p.docs32)+len(p.esc)) + int(unsafe.Sizeof(multiPosting{}))*len(p.multi) + 2*(len(p.lo)+len(p.enc)) + 8 // alignment
}

// cachedBytes is what p will take in the cache: its mapping's pages, or
// its arrays on the heap.
func (p *postings) cachedBytes() int64 {
	if sz := p.arrayBytes(); sz >= offHeapMin && p.n > 0 && p.mem == nil {
		return roundPages(sz) + p.frontBytes() + postingsOverhead
	}
	return p.bytes()
}

func roundPages(n int) int64 {
	return (int64(n) + pageSize - 1) / pageSize * pageSize
}

var pageSize = int64(os.Getpagesize())

// postingsOverhead is what the cache counts for an entry besides its
// arrays: the postings and entry structs, the key and the map slot.
const postingsOverhead = 320

// liveCount returns the postings of each field that are not in del
// (sorted segment-local numbers).
func (p *postings) liveCount(del []uint32) [nFields]uint32 {
	c := p.count
	i := 0
	for _, d := range del {
		if i = p.seek(i, d); i == p.n {
			break
		}
		if p.doc(i) == d {
			for f := range nFields {
				if p.inField(i, f) {
					c[f]--
				}
			}
		}
	}
	return c
}

// gallop returns the first index i >= from with a[i] >= v, len(a) if
// none: an exponential then binary search from from.
func gallop[T uint32 | uint64](a []T, from int, v T) int {
	if from >= len(a) || a[from] >= v {
		return from
	}
	lo, step := from, 1 // a[lo] < v
	hi := from + step
	for hi < len(a) && a[hi] < v {
		lo = hi
		step <<= 1
		hi = from + step
	}
	hi = min(hi, len(a))
	// a[lo] < v, and a[hi] >= v or hi == len(a).
	for lo+1 < hi {
		m := int(uint(lo+hi) >> 1)
		if a[m] < v {
			lo = m
		} else {
			hi = m
		}
	}
	return hi
}

// fieldList is one field's postings of a word in a segment, decoded.
type fieldList struct {
	docs []uint32
	post []fieldPosting
}

// fieldSource gives one field's postings of a word in a segment, in
// document order: doc is noDoc once they are all given.
type fieldSource interface {
	next() (doc uint32, fp fieldPosting, err error)
}

// listSource gives the postings of a fieldList.
type listSource struct {
	l *fieldList
	i int
}

func (s *listSource) next() (uint32, fieldPosting, error) {
	if s.i == len(s.l.docs) {
		return noDoc, fieldPosting{}, nil
	}
	s.i++
	return s.l.docs[s.i-1], s.l.post[s.i-1], nil
}

// iterSource gives the postings of one field of a segment, read by
// bleve's iterator. Damaged postings (numbers out of order or range, a
// norm that is no length) fail with ErrCorrupt.
type iterSource struct {
	ctx          context.Context
	it           segment.PostingsIterator
	field, term  string
	count, total uint64 // the segment's documents; the list's postings
	n            uint64 // postings given
	prev         int64
}

func (s *iterSource) next() (uint32, fieldPosting, error) {
	if s.n%4096 == 4095 {
		if err := s.ctx.Err(); err != nil {
			return 0, fieldPosting{}, err
		}
	}
	d, err := s.it.Next()
	if err != nil || d == nil {
		return noDoc, fieldPosting{}, err
	}
	num, freq, norm := d.Number(), d.Frequency(), d.Norm()
	if int64(num) <= s.prev || num >= s.count || s.n >= s.total {
		return 0, fieldPosting{}, fmt.Errorf("fts: %s postings of %q: %w (document %d after %d, of %d)", s.field, s.term, ErrCorrupt, num, s.prev, s.count)
	}
	s.prev = int64(num)
	s.n++
	var dl float64
	if norm > 0 {
		dl = math.Round(1 / (norm * norm))
	}
	if math.IsNaN(dl) || dl < 0 || dl > math.MaxUint32 || freq > math.MaxUint32 {
		return 0, fieldPosting{}, fmt.Errorf("fts: %s postings of %q: %w (frequency %d, norm %v)", s.field, s.term, ErrCorrupt, freq, norm)
	}
	return uint32(num), fieldPosting{uint32(freq), uint32(dl)}, nil
}

// decodePostings reads term's postings in the scored fields of seg and
// merges them into one list.
func decodePostings(ctx context.Context, seg *scorch.SegmentSnapshot, term string) (*postings, error) {
	var src [nFields]fieldSource
	s := seg.Segment()
	count := min(s.Count(), noDoc) // noDoc itself is no document
	total := 0
	for f, field := range bm25Fields {
		dict, err := s.Dictionary(field)
		if err != nil {
			return nil, err
		}
		pl, err := dict.PostingsList([]byte(term), nil, nil)
		if err != nil {
			return nil, err
		}
		n := pl.Count()
		if n > count {
			return nil, fmt.Errorf("fts: %s postings of %q: %w (%d of %d documents)", field, term, ErrCorrupt, n, count)
		}
		total += int(n)
		src[f] = &iterSource{ctx: ctx, it: pl.Iterator(true, true, false, nil), field: field, term: term, count: count, total: n, prev: -1}
	}
	p, err := mergeSources(&src, total)
	if err != nil {
		return nil, fmt.Errorf("fts: postings of %q: %w", term, err)
	}
	return p, nil
}

// mergeFields merges a word's postings in each field (each ascending)
// into one list.
func mergeFields(fl *[nFields]fieldList) (*postings, error) {
	var src [nFields]fieldSource
	total := 0
	for f := range fl {
		src[f] = &listSource{l: &fl[f]}
		total += len(fl[f].docs)
	}
	return mergeSources(&src, total)
}

// mergeSources merges the postings of each field into one list; total
// is their number. The arrays kept are no larger than the list.
func mergeSources(src *[nFields]fieldSource, total int) (*postings, error) {
	p := &postings{enc: make([]uint16, 0, total)}
	docs := make([]uint32, 0, total)
	var head [nFields]uint32
	var fps [nFields]fieldPosting
	for f := range nFields {
		d, fp, err := src[f].next()
		if err != nil {
			return nil, err
		}
		head[f], fps[f] = d, fp
	}
	for {
		d := min(head[0], head[1], head[2])
		if d == noDoc {
			break
		}
		var m multiPosting
		fields, last := 0, 0
		for f := range nFields {
			if head[f] != d {
				continue
			}
			m.f[f] = fps[f]
			m.in |= 1 << f
			p.count[f]++
			p.front[f] = addFront(p.front[f], fps[f])
			fields++
			last = f
			nd, fp, err := src[f].next()
			if err != nil {
				return nil, err
			}
			if nd <= d && nd != noDoc {
				return nil, fmt.Errorf("%w (document %d after %d)", ErrCorrupt, nd, d)
			}
			head[f], fps[f] = nd, fp
		}
		if fp := m.f[last]; fields == 1 && fp.tf <= encMaxTF && fp.dl <= encMaxDL && fp.tf > 0 {
			p.enc = append(p.enc, uint16(last)<<encField|uint16(fp.tf)<<encTF|uint16(fp.dl))
		} else {
			p.enc = append(p.enc, encEscape)
			p.esc = append(p.esc, uint32(len(docs)))
			p.multi = append(p.multi, m)
		}
		docs = append(docs, d)
	}
	p.n = len(docs)
	p.enc = slices.Clip(p.enc)
	if len(p.enc) < cap(p.enc)*7/8 {
		// Documents holding the word in several fields left room.
		p.enc = slices.Clone(p.enc)
	}
	p.esc, p.multi = slices.Clip(p.esc), slices.Clip(p.multi)
	// Blocks of blockLen documents under one base, when each spans
	// less than lo holds.
	narrow := true
	for b := 0; b < len(docs) && narrow; b += blockLen {
		narrow = docs[min(b+blockLen, len(docs))-1]-docs[b] <= math.MaxUint16
	}
	if !narrow {
		p.docs32 = slices.Clone(docs)
		return p, nil
	}
	p.base, p.lo = make([]uint32, 0, (len(docs)+blockLen-1)/blockLen), make([]uint16, len(docs))
	for i, d := range docs {
		if i%blockLen == 0 {
			p.base = append(p.base, d)
		}
		p.lo[i] = uint16(d - p.base[len(p.base)-1])
	}
	return p, nil
}

// addFront adds q to the postings of a field no other beats (higher
// frequency, lower length), dropping those q beats.
func addFront(front []fieldPosting, q fieldPosting) []fieldPosting {
	out := front[:0]
	for _, o := range front {
		if o.tf >= q.tf && o.dl <= q.dl {
			return front // o beats q, or is q
		}
		if !(q.tf >= o.tf && q.dl <= o.dl) {
			out = append(out, o)
		}
	}
	return append(out, q)
}

// postingsKey names a word's postings in one segment.
type postingsKey struct {
	seg   uint64 // scorch segment id
	count uint64 // the segment's documents, deleted included
	term  string
}

func listKey(seg *scorch.SegmentSnapshot, term string) postingsKey {
	return postingsKey{seg: seg.Id(), count: seg.Segment().Count(), term: term}
}

// postingsCache keeps decoded postings up to a number of bytes. A list
// is kept while there is room; once the cache is full, a list decoded
// again replaces lists asked for less often than it, each the least
// asked-for of a few lists drawn at random (evictSample), and stays out
// when one of those was asked for as often. The counts (of hits and
// misses alike) are halved every agingEvery requests, so that the cache
// follows a workload that changes, and a workload that cycles over more
// lists than fit keeps the lists it holds instead of replacing each by
// the next.
type postingsCache struct {
	mu      sync.Mutex
	max     int64 // bytes; 0 keeps nothing
	bytes   int64
	entries map[postingsKey]*postings
	uses    map[postingsKey]uint32 // requests of lists, cached or not, since the last halving
	ticks   int                    // requests since the last halving
	dropped int                    // lists dropped, for the tests
}

// evictSample is the number of lists drawn to choose one to replace;
// maxEvict bounds the lists one list replaces.
const (
	evictSample = 8
	maxEvict    = 16
)

// agingEvery is the number of requests after which the counts halve;
// maxCounted bounds the lists counted (a key and 4 bytes each).
const (
	agingEvery = 1 << 14
	maxCounted = 1 << 14
)

func newPostingsCache(max int64) *postingsCache {
	return &postingsCache{max: max, entries: map[postingsKey]*postings{}, uses: map[postingsKey]uint32{}}
}

// get returns the cached postings of k, or nil, and counts the request.
// The caller releases the postings it got once it no longer reads them.
func (c *postingsCache) get(k postingsKey) *postings {
	if c.max <= 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count(k)
	p := c.entries[k]
	if p != nil {
		p.refs++
	}
	return p
}

// release says the postings ps, from get, are no longer read.
func (c *postingsCache) release(ps []*postings) {
	if len(ps) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range ps {
		p.refs--
		c.free(p)
	}
}

// drop takes p out of the cache. The caller holds mu.
func (c *postingsCache) drop(k postingsKey) {
	p := c.entries[k]
	c.bytes -= p.bytes()
	delete(c.entries, k)
	c.dropped++
	p.gone = true
	c.free(p)
}

// free releases the mapping of p once the cache dropped it and no search
// reads it; its arrays are emptied first, so that a reader left by
// mistake fails on an index, not on unmapped memory. The caller holds mu.
func (c *postingsCache) free(p *postings) {
	if !p.gone || p.refs > 0 || p.mem == nil {
		return
	}
	mem := p.mem
	p.mem, p.base, p.docs32, p.esc, p.multi, p.lo, p.enc, p.n = nil, nil, nil, nil, nil, nil, nil, 0
	_ = unmapAnon(mem)
}

// close drops every list; the caller no longer searches.
func (c *postingsCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		c.drop(k)
	}
	c.max = 0
}

// count adds a request of k, halving every count every agingEvery
// requests or when too many lists are counted.
func (c *postingsCache) count(k postingsKey) {
	c.uses[k]++
	if c.ticks++; c.ticks < agingEvery && len(c.uses) <= maxCounted {
		return
	}
	c.ticks = 0
	for key, n := range c.uses {
		if n /= 2; n == 0 {
			delete(c.uses, key)
		} else {
			c.uses[key] = n
		}
	}
}

// put offers p, just decoded for k, to the cache.
func (c *postingsCache) put(k postingsKey, p *postings) {
	if c.max <= 0 {
		return
	}
	n := p.cachedBytes()
	if n > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[k] != nil || c.max <= 0 {
		return
	}
	if c.bytes+n > c.max {
		want := c.uses[k]
		var victims []postingsKey
		freed := int64(0)
		for freed < c.bytes+n-c.max {
			if len(victims) == maxEvict {
				return
			}
			// The least asked-for of a few lists (map order is random).
			var v postingsKey
			found, least, seen := false, uint32(math.MaxUint32), 0
			for key := range c.entries {
				if containsKey(victims, key) {
					continue
				}
				if u := c.uses[key]; u < least {
					v, least, found = key, u, true
				}
				if seen++; seen == evictSample {
					break
				}
			}
			if !found || least >= want {
				return
			}
			victims = append(victims, v)
			freed += c.entries[v].bytes()
		}
		for _, v := range victims {
			c.drop(v)
		}
	}
	q := p.offHeap()
	if c.bytes+q.bytes() > c.max {
		return // no mapping, and the arrays on the heap take more
	}
	c.entries[k] = q
	c.bytes += q.bytes()
}

func containsKey(ks []postingsKey, k postingsKey) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// size returns the bytes and lists held.
func (c *postingsCache) size() (int64, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, len(c.entries)
}

// segmentPostings returns term's postings in seg: cached, or decoded
// now and offered to the cache.
func (x *Index) segmentPostings(ctx context.Context, seg *scorch.SegmentSnapshot, term string, cached *postings) (*postings, error) {
	if cached != nil {
		return cached, nil
	}
	p, err := decodePostings(ctx, seg, term)
	if err != nil {
		return nil, err
	}
	x.postings.put(listKey(seg, term), p)
	return p, nil
}

// deletedDocs are a segment's deleted documents in a snapshot, sorted,
// nil when none.
func deletedDocs(seg *scorch.SegmentSnapshot) []uint32 {
	del := seg.Deleted()
	if del == nil || del.IsEmpty() {
		return nil
	}
	return del.ToArray()
}
