package fts

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// The text search reads a word's postings in one field of one scorch
// segment as arrays: document numbers, frequencies and field lengths,
// decoded from the segment once and kept in a cache bounded in bytes
// (Options.PostingsCache). Bleve's own iterator decodes a posting's
// frequency and norm at every visit and has no skip data for them, so a
// seek reads every posting up to its target; over arrays a seek is a
// galloping search, and a visit a few loads.
//
// A segment never changes once it is in a snapshot: documents deleted
// or replaced later are marked in the snapshot's deleted set of the
// segment, and a merge writes a new segment under a new id. The arrays
// hold every posting of the segment, deleted or not; the search applies
// the deleted set of the snapshot it reads. Segment ids are unique for
// the life of a scorch index (a persisted in-memory segment keeps its
// id and its content), and the cache is the Index's own.

// postings are one word's postings in one field of one segment.
type postings struct {
	docs []uint32 // segment-local document numbers, ascending
	// fd packs each posting's frequency (high 8 bits) and field length
	// (low 24 bits); when some posting does not fit, fd is nil and freq
	// and dl hold them.
	fd       []uint32
	freq, dl []uint32
}

// fdBits is the width of a packed field length.
const fdBits = 24

func (p *postings) at(i int) (freq, dl float64) {
	if p.fd != nil {
		v := p.fd[i]
		return float64(v >> fdBits), float64(v & (1<<fdBits - 1))
	}
	return float64(p.freq[i]), float64(p.dl[i])
}

// bytes is the memory p holds, for the cache's bound.
func (p *postings) bytes() int64 {
	return int64(4*(cap(p.docs)+cap(p.fd)+cap(p.freq)+cap(p.dl))) + postingsOverhead
}

// postingsOverhead is what the cache counts for an entry besides its
// arrays: the postings and entry structs, the key and the map slot.
const postingsOverhead = 160

// live counts p's documents not in del (sorted segment-local numbers).
func (p *postings) live(del []uint32) int {
	n := len(p.docs)
	if len(del) == 0 || n == 0 {
		return n
	}
	// Walk the shorter list and gallop in the longer one.
	dead := 0
	if len(del) <= n {
		i := 0
		for _, d := range del {
			i = gallop(p.docs, i, d)
			if i == n {
				break
			}
			if p.docs[i] == d {
				dead++
			}
		}
	} else {
		j := 0
		for _, d := range p.docs {
			j = gallop(del, j, d)
			if j == len(del) {
				break
			}
			if del[j] == d {
				dead++
			}
		}
	}
	return n - dead
}

// gallop returns the first index i >= from with a[i] >= v, len(a) if
// none: an exponential then binary search from from.
func gallop(a []uint32, from int, v uint32) int {
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

// decodePostings reads term's postings in field from seg, whose
// documents are numbered below count. Damaged postings (numbers out of
// order or range, a norm that is no length) fail with ErrCorrupt.
func decodePostings(ctx context.Context, seg *scorch.SegmentSnapshot, field, term string) (*postings, error) {
	s := seg.Segment()
	dict, err := s.Dictionary(field)
	if err != nil {
		return nil, err
	}
	pl, err := dict.PostingsList([]byte(term), nil, nil)
	if err != nil {
		return nil, err
	}
	count := s.Count()
	n := pl.Count()
	if n > count {
		return nil, fmt.Errorf("fts: %s postings of %q: %w (%d of %d documents)", field, term, ErrCorrupt, n, count)
	}
	p := &postings{docs: make([]uint32, 0, n), fd: make([]uint32, 0, n)}
	it := pl.Iterator(true, true, false, nil)
	prev := int64(-1)
	for i := 0; ; i++ {
		if i%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		d, err := it.Next()
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		num, freq, norm := d.Number(), d.Frequency(), d.Norm()
		if int64(num) <= prev || num >= count || len(p.docs) >= int(n) {
			return nil, fmt.Errorf("fts: %s postings of %q: %w (document %d after %d, of %d)", field, term, ErrCorrupt, num, prev, count)
		}
		prev = int64(num)
		var dl float64
		if norm > 0 {
			dl = math.Round(1 / (norm * norm))
		}
		if math.IsNaN(dl) || dl < 0 || dl > math.MaxUint32 || freq > math.MaxUint32 {
			return nil, fmt.Errorf("fts: %s postings of %q: %w (frequency %d, norm %v)", field, term, ErrCorrupt, freq, norm)
		}
		p.add(uint32(num), uint32(freq), uint32(dl))
	}
	return p, nil
}

// add appends a posting, unpacking fd when it does not fit.
func (p *postings) add(doc, freq, dl uint32) {
	p.docs = append(p.docs, doc)
	if p.fd != nil && (freq >= 1<<(32-fdBits) || dl >= 1<<fdBits) {
		p.freq, p.dl = make([]uint32, len(p.fd), cap(p.fd)), make([]uint32, len(p.fd), cap(p.fd))
		for i, v := range p.fd {
			p.freq[i], p.dl[i] = v>>fdBits, v&(1<<fdBits-1)
		}
		p.fd = nil
	}
	if p.fd != nil {
		p.fd = append(p.fd, freq<<fdBits|dl)
		return
	}
	p.freq, p.dl = append(p.freq, freq), append(p.dl, dl)
}

// postingsKey names a word's postings in one field of one segment.
type postingsKey struct {
	seg   uint64 // scorch segment id
	count uint64 // the segment's documents, deleted included
	field int
	term  string
}

// postingsCache keeps decoded postings up to a number of bytes. A list
// is kept while there is room; once the cache is full, a list decoded
// again replaces the lists least used since they were counted, only if
// it was asked for more often than each of them. The counts (of hits
// and misses alike) are halved every agingEvery uses, so that the cache
// follows a workload that changes, and a workload that cycles over more
// lists than fit keeps the lists it holds instead of replacing each by
// the next.
type postingsCache struct {
	mu      sync.Mutex
	max     int64 // bytes; 0 keeps nothing
	bytes   int64
	entries map[postingsKey]*cacheEntry
	uses    map[postingsKey]uint32 // requests of lists, cached or not, since the last halving
	ticks   int                    // requests since the last halving
}

type cacheEntry struct {
	p *postings
	n int64 // p.bytes()
}

// agingEvery is the number of requests after which the counts halve;
// maxCounted bounds the lists counted (8 bytes and a key each).
const (
	agingEvery = 1 << 14
	maxCounted = 1 << 14
)

func newPostingsCache(max int64) *postingsCache {
	return &postingsCache{max: max, entries: map[postingsKey]*cacheEntry{}, uses: map[postingsKey]uint32{}}
}

// get returns the cached postings of k, or nil, and counts the request.
func (c *postingsCache) get(k postingsKey) *postings {
	if c.max <= 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count(k)
	if e := c.entries[k]; e != nil {
		return e.p
	}
	return nil
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
	n := p.bytes()
	if n > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[k] != nil {
		return
	}
	if c.bytes+n > c.max {
		// The least used lists that free enough room, each used less
		// than k; otherwise k stays out.
		want := c.uses[k]
		var victims []postingsKey
		freed := int64(0)
		for freed < c.bytes+n-c.max {
			var v postingsKey
			best := uint32(math.MaxUint32)
			for key := range c.entries {
				if u := c.uses[key]; u < best && !containsKey(victims, key) {
					v, best = key, u
				}
			}
			if best >= want || best == math.MaxUint32 {
				return
			}
			victims = append(victims, v)
			freed += c.entries[v].n
		}
		for _, v := range victims {
			c.bytes -= c.entries[v].n
			delete(c.entries, v)
		}
	}
	c.entries[k] = &cacheEntry{p: p, n: n}
	c.bytes += n
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

// segmentPostings decodes term's postings in field fi of seg, which the
// cache did not hold, and offers them to it.
func (x *Index) segmentPostings(ctx context.Context, seg *scorch.SegmentSnapshot, fi int, term string) (*postings, error) {
	p, err := decodePostings(ctx, seg, bm25Fields[fi], term)
	if err != nil {
		return nil, err
	}
	x.postings.put(listKey(seg, fi, term), p)
	return p, nil
}

func listKey(seg *scorch.SegmentSnapshot, fi int, term string) postingsKey {
	return postingsKey{seg: seg.Id(), count: seg.Segment().Count(), field: fi, term: term}
}

// deletedDocs are a segment's deleted documents in a snapshot, sorted,
// nil when none.
func deletedDocs(seg *scorch.SegmentSnapshot) (*roaring.Bitmap, []uint32) {
	del := seg.Deleted()
	if del == nil || del.IsEmpty() {
		return nil, nil
	}
	return del, del.ToArray()
}
