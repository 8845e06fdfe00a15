package fts

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"os"
	"slices"
	"sync"
	"unsafe"

	"github.com/blevesearch/bleve/v2/index/scorch"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zap "github.com/blevesearch/zapx/v17"

	"github.com/hmo-dev/hmo/internal/offheap"
)

// The text search reads a word's postings in one scorch segment as
// arrays: the documents that hold the word in any scored field, ascending,
// and for each the field, frequency and field length, decoded from the
// segment once and kept in a cache bounded in bytes
// (Options.PostingsCache). Bleve's own iterator decodes a posting's
// frequency and norm at every visit and has no skip data for them, so a
// seek reads every posting up to its target, and a word is three lists
// (one per field) to merge. The arrays are compact, so that more lists
// fit in the cache's bytes: the documents as gaps of a byte or more,
// with the first document of every blockLen kept whole, over which a
// seek gallops before it walks the block; a posting's field, frequency
// and length as a byte, its place among the few distinct ones of the
// list.
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
	// The documents, segment-local numbers, ascending: each is the one
	// before (0 for the first) plus a gap, a uvarint in gaps. In blocks
	// of blockLen, block b's first document is base[b], and the gap of
	// its second starts at gaps[off[b]], for the seeks.
	base []uint32
	off  []uint32
	gaps []byte
	// Each document's posting: the field, frequency and field length
	// when the document holds the word in one field with values that fit
	// (the layout of an enc below), and otherwise encEscape: the
	// document is then listed in esc (ascending), and its fields are the
	// same place of multi. The encs are code[i]'s place in dict when the
	// list has fewer than code8Escape of them (a byte each; code8Escape
	// stands for encEscape), and enc[i] otherwise (code is then nil).
	code  []uint8
	dict  []uint16
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
	mem, err := offheap.Map(sz)
	if err != nil {
		return p
	}
	q := *p
	q.mem, q.refs, q.gone = mem, 0, false
	off := 0
	q.base = carve(mem, &off, p.base)
	q.off = carve(mem, &off, p.off)
	q.esc = carve(mem, &off, p.esc)
	q.multi = carve(mem, &off, p.multi)
	q.dict = carve(mem, &off, p.dict)
	q.enc = carve(mem, &off, p.enc)
	q.code = carve(mem, &off, p.code)
	q.gaps = carve(mem, &off, p.gaps)
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

// code8Escape is the code of an escaped posting in code, and the most
// encs dict holds.
const code8Escape = math.MaxUint8

// blockLen documents share a base; blockShift is its log2.
const (
	blockShift = 6
	blockLen   = 1 << blockShift
)

// cursor is a place in a list: posting i, of document doc (noDoc past
// the end), whose gap ends before gaps[gpos].
type cursor struct {
	i    int
	doc  uint32
	gpos int
}

// start returns a cursor on p's first posting.
func (p *postings) start() cursor {
	if p.n == 0 {
		return cursor{doc: noDoc}
	}
	return cursor{doc: p.base[0], gpos: int(p.off[0])}
}

// next moves c to the next posting.
func (p *postings) next(c *cursor) {
	c.i++
	var gap uint32
	for shift := 0; c.gpos < len(p.gaps); shift += 7 {
		b := p.gaps[c.gpos]
		c.gpos++
		if gap |= uint32(b&0x7f) << shift; b < 0x80 {
			c.doc += gap
			return
		}
	}
	c.i, c.doc = p.n, noDoc
}

// seek moves c to the first posting at or after it of a document
// numbered v or more (the end if none): a galloping search over the
// blocks' bases, then a walk in the block.
func (p *postings) seek(c *cursor, v uint32) {
	if c.doc >= v {
		return
	}
	// The last block from c's on whose base is v or less: the documents
	// after it are above v.
	cb := c.i >> blockShift
	if b := gallop(p.base, cb+1, v+1) - 1; b > cb {
		c.i, c.doc, c.gpos = b<<blockShift, p.base[b], int(p.off[b])
		if c.doc >= v {
			return
		}
	}
	// The walk: most gaps are a byte, and eight of them that all stay
	// below v are passed at once (the gaps after c's are those of the
	// postings after it, one each), until eight reach v: it is then
	// among the next eight postings, walked one by one.
	gaps := p.gaps
	near := false
	for c.doc < v {
		g := c.gpos
		if !near && g+8 <= len(gaps) {
			if x := binary.LittleEndian.Uint64(gaps[g:]); x&0x8080808080808080 == 0 {
				// The eight bytes' sum, in 16-bit lanes: at most 8*127.
				y := x&0x00ff00ff00ff00ff + x>>8&0x00ff00ff00ff00ff
				if s := uint32(y * 0x0001000100010001 >> 48); c.doc+s < v {
					c.i, c.doc, c.gpos = c.i+8, c.doc+s, g+8
					continue
				}
				near = true
			}
		}
		if g < len(gaps) && gaps[g] < 0x80 {
			c.i, c.doc, c.gpos = c.i+1, c.doc+uint32(gaps[g]), g+1
			continue
		}
		p.next(c)
	}
}

// encAt is posting i's enc.
func (p *postings) encAt(i int) uint16 {
	if p.code == nil {
		return p.enc[i]
	}
	if c := p.code[i]; c != code8Escape {
		return p.dict[c]
	}
	return encEscape
}

// doc is document i's number (a walk from its block's first: for the
// tests).
func (p *postings) doc(i int) uint32 {
	b := i >> blockShift
	c := cursor{i: b << blockShift, doc: p.base[b], gpos: int(p.off[b])}
	for c.i < i {
		p.next(&c)
	}
	return c.doc
}

// multiAt is the fields of document i, which enc escapes.
func (p *postings) multiAt(i int) *multiPosting {
	j, _ := slices.BinarySearch(p.esc, uint32(i))
	return &p.multi[j]
}

// fields returns the word's frequency and length in each field of
// document i of p, 0 frequency in a field that does not hold it.
func (p *postings) fields(i int) [nFields]fieldPosting {
	e := p.encAt(i)
	if e&encEscape == encEscape {
		return p.multiAt(i).f
	}
	var fs [nFields]fieldPosting
	fs[e>>encField] = fieldPosting{tf: uint32(e >> encTF & encMaxTF), dl: uint32(e & encMaxDL)}
	return fs
}

// said reports whether document i holds the word in the text field,
// as wordCursor.score says.
func (p *postings) said(i int) bool {
	e := p.encAt(i)
	if e&encEscape == encEscape {
		return p.multiAt(i).f[fText].tf != 0
	}
	return int(e>>encField) == fText
}

// inField reports whether document i holds the word in field f (with a
// frequency that may be 0).
func (p *postings) inField(i, f int) bool {
	e := p.encAt(i)
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
	n := 4*(cap(p.base)+cap(p.off)+cap(p.esc)) + 2*(cap(p.dict)+cap(p.enc)) + cap(p.code) + cap(p.gaps) + 28*cap(p.multi)
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
	return 4*(len(p.base)+len(p.off)+len(p.esc)) + int(unsafe.Sizeof(multiPosting{}))*len(p.multi) + 2*(len(p.dict)+len(p.enc)) + len(p.code) + len(p.gaps) + 8 // alignment
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
const postingsOverhead = 360

// liveCount returns the postings of each field that are not in del
// (sorted segment-local numbers).
func (p *postings) liveCount(del []uint32) [nFields]uint32 {
	c := p.count
	cur := p.start()
	for _, d := range del {
		if p.seek(&cur, d); cur.doc == noDoc {
			break
		}
		if cur.doc == d {
			for f := range nFields {
				if p.inField(cur.i, f) {
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

// fieldLists are reused by decodePostings.
var fieldLists = sync.Pool{New: func() any { return new([nFields]fieldList) }}

// readField appends to l the postings of one field of a segment, read by
// bleve's iterator. Damaged postings (numbers out of order or range, a
// norm that is no length) fail with ErrCorrupt. count is the segment's
// documents, total the list's postings.
func readField(ctx context.Context, it segment.PostingsIterator, l *fieldList, field, term string, count, total uint64) error {
	lens := normLengths.Get().(*normLengthMemo)
	defer normLengths.Put(lens)
	// Local slices, assigned to l on return: no write barrier a posting.
	docs, post := l.docs, l.post
	defer func() { l.docs, l.post = docs, post }()
	prev := int64(-1)
	for n := uint64(0); ; n++ {
		if n%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		d, err := it.Next()
		if err != nil || d == nil {
			return err
		}
		var num, freq uint64
		var dl float64
		if z, ok := d.(*zap.Posting); ok {
			// The length from the norm's bits, of which Norm is a
			// function: worked out once per value.
			num, freq = z.Number(), z.Frequency()
			if bits := z.NormUint64(); bits < uint64(len(lens)) {
				if lens[bits] == 0 {
					lens[bits] = normLength(z.Norm()) + 1
				}
				dl = lens[bits] - 1
			} else {
				dl = normLength(z.Norm())
			}
		} else {
			num, freq, dl = d.Number(), d.Frequency(), normLength(d.Norm())
		}
		if int64(num) <= prev || num >= count || n >= total {
			return fmt.Errorf("fts: %s postings of %q: %w (document %d after %d, of %d)", field, term, ErrCorrupt, num, prev, count)
		}
		prev = int64(num)
		if math.IsNaN(dl) || dl < 0 || dl > math.MaxUint32 || freq > math.MaxUint32 {
			return fmt.Errorf("fts: %s postings of %q: %w (frequency %d, length %v)", field, term, ErrCorrupt, freq, dl)
		}
		docs = append(docs, uint32(num))
		post = append(post, fieldPosting{uint32(freq), uint32(dl)})
	}
}

// normLength is the field length a posting's norm stands for.
func normLength(norm float64) float64 {
	if norm > 0 {
		return math.Round(1 / (norm * norm))
	}
	return 0
}

// normLengthMemo holds, by a zap posting's norm bits, normLength of its
// Norm plus 1 (0: not worked out yet). Norm is a function of the bits,
// so a memo serves every list.
type normLengthMemo [4096]float64

var normLengths = sync.Pool{New: func() any { return new(normLengthMemo) }}

// zapReadOff makes decodePostings read every list through bleve's
// iterator, for the tests.
var zapReadOff bool

// decodePostings reads term's postings in the scored fields of seg and
// merges them into one list.
func decodePostings(ctx context.Context, seg *scorch.SegmentSnapshot, term string) (*postings, error) {
	fl := fieldLists.Get().(*[nFields]fieldList)
	defer func() {
		for f := range fl {
			fl[f].docs, fl[f].post = fl[f].docs[:0], fl[f].post[:0]
		}
		fieldLists.Put(fl)
	}()
	s := seg.Segment()
	count := min(s.Count(), noDoc) // noDoc itself is no document
	zs, direct := s.(*zap.Segment)
	for f, field := range bm25Fields {
		if direct && !zapReadOff {
			ok, err := readZapField(ctx, zs, &fl[f], field, term, count)
			if err != nil {
				return nil, err
			}
			if ok {
				continue
			}
		}
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
		if err := readField(ctx, pl.Iterator(true, true, false, nil), &fl[f], field, term, count, n); err != nil {
			return nil, err
		}
	}
	p, err := mergeFields(fl)
	if err != nil {
		return nil, fmt.Errorf("fts: postings of %q: %w", term, err)
	}
	return p, nil
}

// mergeFields merges a word's postings in each field (each ascending)
// into one list. The arrays kept are no larger than the list.
func mergeFields(fl *[nFields]fieldList) (*postings, error) {
	total := 0
	for f := range fl {
		total += len(fl[f].docs)
	}
	p := &postings{}
	// The merged list's encs, in a scratch array encodeEncs copies, and
	// its documents encoded as they come (encodeDocs).
	sc := mergeScratch.Get().(*mergeBufs)
	defer mergeScratch.Put(sc)
	encs := slices.Grow(sc.encs[:0], total)
	defer func() { sc.encs = encs }()
	var de docEncoder
	de.start(total, sc.gaps[:0])
	defer func() { sc.gaps = de.gaps[:0] }()
	// The escaped postings gather in scratch arrays too, copied at the
	// end at their size: appended to the list's own, a list of many
	// documents holding the word in two fields allocated about twice
	// its multi array in the arrays it outgrew.
	esc, multi := sc.esc[:0], sc.multi[:0]
	defer func() { sc.esc, sc.multi = esc[:0], multi[:0] }()
	var at [nFields]int
	var fronts [nFields]frontBuilder
	for f := range fronts {
		fronts[f].reset()
	}
	var heads [nFields]uint32
	head := func(f int) uint32 {
		if at[f] < len(fl[f].docs) {
			return fl[f].docs[at[f]]
		}
		return noDoc
	}
	for f := range heads {
		heads[f] = head(f)
	}
	for {
		d := min(heads[0], heads[1], heads[2])
		if d == noDoc {
			break
		}
		// The fields that hold the word in d, a bit each.
		in := 0
		if heads[0] == d {
			in |= 1
		}
		if heads[1] == d {
			in |= 2
		}
		if heads[2] == d {
			in |= 4
		}
		if in&(in-1) == 0 {
			// The common case: one field holds the word.
			f := bits.TrailingZeros8(uint8(in))
			fp := fl[f].post[at[f]]
			p.count[f]++
			fronts[f].add(fp)
			at[f]++
			if heads[f] = head(f); heads[f] <= d {
				return nil, fmt.Errorf("%w (document %d after %d)", ErrCorrupt, heads[f], d)
			}
			if fp.tf <= encMaxTF && fp.dl <= encMaxDL && fp.tf > 0 {
				encs = append(encs, uint16(f)<<encField|uint16(fp.tf)<<encTF|uint16(fp.dl))
			} else {
				var m multiPosting
				m.f[f], m.in = fp, 1<<f
				encs = append(encs, encEscape)
				esc = append(esc, uint32(de.n))
				multi = append(multi, m)
			}
			de.add(d)
			continue
		}
		var m multiPosting
		for f := range nFields {
			if heads[f] != d {
				continue
			}
			fp := fl[f].post[at[f]]
			m.f[f] = fp
			m.in |= 1 << f
			p.count[f]++
			fronts[f].add(fp)
			at[f]++
			if heads[f] = head(f); heads[f] <= d {
				return nil, fmt.Errorf("%w (document %d after %d)", ErrCorrupt, heads[f], d)
			}
		}
		encs = append(encs, encEscape)
		esc = append(esc, uint32(de.n))
		multi = append(multi, m)
		de.add(d)
	}
	for f := range fronts {
		p.front[f] = fronts[f].front()
	}
	p.n = de.n
	p.esc, p.multi = cloneOrNil(esc), cloneOrNil(multi)
	p.base, p.off, p.gaps = de.base, de.off, slices.Clone(de.gaps)
	p.encodeEncs(encs)
	return p, nil
}

// frontBuilder gathers a field's front (addFront) from its postings:
// the least length of each small frequency, and the others as they come.
type frontBuilder struct {
	minDL [frontTFs]uint32 // by frequency; math.MaxUint32: none
	other []fieldPosting   // frequency 0 or frontTFs and more
}

// frontTFs is the frequencies frontBuilder keeps a least length for.
const frontTFs = 16

func (b *frontBuilder) reset() {
	for i := range b.minDL {
		b.minDL[i] = math.MaxUint32
	}
	b.other = nil
}

func (b *frontBuilder) add(q fieldPosting) {
	if q.tf-1 < frontTFs-1 { // 1 to frontTFs-1
		b.minDL[q.tf] = min(b.minDL[q.tf], q.dl)
		return
	}
	b.other = addFront(b.other, q)
}

// front is the postings no other beats, as addFront keeps them.
func (b *frontBuilder) front() []fieldPosting {
	fr := b.other
	for tf, dl := range b.minDL {
		if dl != math.MaxUint32 {
			fr = addFront(fr, fieldPosting{tf: uint32(tf), dl: dl})
		}
	}
	return slices.Clip(fr)
}

// mergeBufs are mergeFields's scratch arrays.
type mergeBufs struct {
	encs  []uint16
	gaps  []byte
	esc   []uint32
	multi []multiPosting
}

// cloneOrNil returns a copy of s at its length, nil when s is empty (a
// clone of an empty slice would keep s's array).
func cloneOrNil[E any](s []E) []E {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

var mergeScratch = sync.Pool{New: func() any { return new(mergeBufs) }}

// docEncoder encodes a list's documents (ascending) as postings keeps
// them: gaps, and each block's first document and gap offset.
type docEncoder struct {
	n         int
	prev      uint32
	base, off []uint32
	gaps      []byte
}

func (e *docEncoder) start(total int, gaps []byte) {
	nb := (total + blockLen - 1) / blockLen
	*e = docEncoder{base: make([]uint32, 0, nb), off: make([]uint32, 0, nb), gaps: gaps}
}

func (e *docEncoder) add(d uint32) {
	if g := d - e.prev; g < 0x80 {
		e.gaps = append(e.gaps, byte(g)) // most gaps: a byte
	} else {
		e.gaps = binary.AppendUvarint(e.gaps, uint64(g))
	}
	e.prev = d
	if e.n&(blockLen-1) == 0 {
		e.base, e.off = append(e.base, d), append(e.off, uint32(len(e.gaps)))
	}
	e.n++
}

// encodeEncs sets p's postings' encs: a byte each, the place of the enc
// in dict, when there are fewer than code8Escape of them.
func (p *postings) encodeEncs(encs []uint16) {
	pl := encPlaces.Get().(*[1 << 16]uint8) // an enc's place in dict plus 1, 0 for none
	defer func() {
		for _, e := range p.dict {
			pl[e] = 0
		}
		encPlaces.Put(pl)
	}()
	for _, e := range encs {
		if pl[e] != 0 || e == encEscape {
			continue
		}
		if len(p.dict) == code8Escape {
			for _, d := range p.dict {
				pl[d] = 0
			}
			p.dict, p.enc = nil, slices.Clone(encs)
			return
		}
		p.dict = append(p.dict, e)
		pl[e] = uint8(len(p.dict))
	}
	p.dict = slices.Clip(p.dict)
	p.code = make([]uint8, len(encs))
	for i, e := range encs {
		if e == encEscape {
			p.code[i] = code8Escape
		} else {
			p.code[i] = pl[e] - 1
		}
	}
}

var encPlaces = sync.Pool{New: func() any { return new([1 << 16]uint8) }}

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
	p.mem, p.base, p.off, p.gaps, p.code, p.dict, p.enc, p.esc, p.multi, p.n = nil, nil, nil, nil, nil, nil, nil, nil, nil, 0
	_ = offheap.Unmap(mem)
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

// room returns the bytes the cache can take before it is full, and its
// size.
func (c *postingsCache) room() (free, size int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.max - c.bytes, c.max
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
