package fts

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	index "github.com/blevesearch/bleve_index_api"
	"github.com/blevesearch/vellum"
	zap "github.com/blevesearch/zapx/v17"
)

// A persisted segment's postings are read from its file directly when
// the list is decoded, instead of through bleve's iterator, which builds
// a posting and checks its chunk at every step: a word's list in one
// field of a zap v17 segment is a roaring bitmap of its documents, and,
// in chunks of documents, each document's frequency and norm as
// uvarints (zapx's posting.go, intcoder.go). The dictionary (an FST
// from word to the list's place) is found by Segment.DictAddr.
// readZapField reads them as zapx's PostingsIterator does, and falls
// back to it (ok false) for what it does not read: a segment not
// persisted, a file read through a reader hook (index.ReaderHook, for
// encrypted files), a chunk mode it does not know. TestZapReadIsBleve
// checks the lists against bleve's iterator.

// errZapShape is a list whose layout readZapField does not follow.
var errZapShape = errors.New("unexpected zap layout")

// readZapField appends to l the postings of term in field of seg, read
// from the segment's file, and reports whether it did; when it did not,
// l is unchanged and the caller reads them through bleve. count is the
// segment's documents.
func readZapField(ctx context.Context, seg *zap.Segment, l *fieldList, field, term string, count uint64) (ok bool, err error) {
	if index.ReaderHook != nil || seg.Version() != zap.Version {
		return false, nil
	}
	mem := seg.Data()
	dictLoc, err := seg.DictAddr(field)
	if err != nil {
		return false, nil // no such field here: bleve says what it has
	}
	fstLen, n := uvarintAt(mem, dictLoc)
	if n <= 0 || fstLen == 0 || dictLoc+uint64(n)+fstLen > uint64(len(mem)) {
		return false, nil
	}
	fst, err := vellum.Load(mem[dictLoc+uint64(n) : dictLoc+uint64(n)+fstLen])
	if err != nil {
		return false, nil
	}
	val, found, err := fst.Get([]byte(term))
	if err != nil || !found {
		return err == nil, nil
	}
	lens := zapLengths.Get().(*zapLengthMemo)
	defer zapLengths.Put(lens)
	if val&zap.FSTValEncodingMask == zap.FSTValEncoding1Hit {
		num, normBits := zap.FSTValDecode1Hit(val)
		if num >= count {
			return true, fmt.Errorf("fts: %s postings of %q: %w (document %d, of %d)", field, term, ErrCorrupt, num, count)
		}
		dl, err := lens.length(normBits)
		if err != nil {
			return true, fmt.Errorf("fts: %s postings of %q: %w", field, term, err)
		}
		l.docs, l.post = append(l.docs, uint32(num)), append(l.post, fieldPosting{1, dl})
		return true, nil
	}
	if val&zap.FSTValEncodingMask != zap.FSTValEncodingGeneral {
		return false, nil
	}
	corrupt := func(what string) error {
		return fmt.Errorf("fts: %s postings of %q: %w (%s)", field, term, ErrCorrupt, what)
	}
	// The list: where its frequencies and locations are, and its bitmap.
	at := val
	freqOff, n1 := uvarintAt(mem, at)
	_, n2 := uvarintAt(mem, at+uint64(max(n1, 0)))
	bmLen, n3 := uvarintAt(mem, at+uint64(max(n1, 0)+max(n2, 0)))
	if n1 <= 0 || n2 <= 0 || n3 <= 0 {
		return true, corrupt("list header")
	}
	at += uint64(n1 + n2 + n3)
	if at+bmLen > uint64(len(mem)) {
		return true, corrupt("bitmap out of the file")
	}
	bm := roaring.New()
	if _, err := bm.FromBuffer(mem[at : at+bmLen]); err != nil {
		return true, corrupt(err.Error())
	}
	card := bm.GetCardinality()
	chunkSize, err := zapChunkSize(seg.ChunkMode(), card, seg.NumDocs())
	if err != nil {
		return false, nil
	}
	if freqOff == 0 || freqOff >= uint64(len(mem)) {
		return true, corrupt("no frequencies")
	}
	if card > count {
		return true, corrupt("more postings than documents")
	}
	// The chunks: their number, where each ends, and where they start.
	nChunks, n := uvarintAt(mem, freqOff)
	if n <= 0 || nChunks > uint64(len(mem)) {
		return true, corrupt("chunks")
	}
	pos := freqOff + uint64(n)
	ends := make([]uint64, nChunks)
	for i := range ends {
		if ends[i], n = uvarintAt(mem, pos); n <= 0 || i > 0 && ends[i] < ends[i-1] {
			return true, corrupt("chunk offsets")
		}
		pos += uint64(n)
	}
	dataStart := pos
	// The postings are written in place into arrays of the list's size:
	// one bounds check a posting instead of two appends.
	k0 := len(l.docs)
	docs := slices.Grow(l.docs, int(card))[:k0+int(card)]
	post := slices.Grow(l.post, int(card))[:k0+int(card)]
	k := k0
	var chunk []byte
	cp := 0             // the next byte of chunk
	var chunkEnd uint64 // the first document past the current chunk
	prev := int64(-1)   // the document before
	it := bm.ManyIterator()
	// The iterator's buffer, from a pool: given to an interface's
	// method, a local array would be on the heap every call.
	bp := zapIterBufs.Get().(*[256]uint32)
	defer zapIterBufs.Put(bp)
	buf := bp[:]
	for {
		got := it.NextMany(buf)
		if got == 0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return true, err
		}
		if k+got > len(docs) {
			return true, corrupt("bitmap count")
		}
		for _, d32 := range buf[:got] {
			d := uint64(d32)
			if int64(d) <= prev || d >= count {
				return true, fmt.Errorf("fts: %s postings of %q: %w (document %d after %d, of %d)", field, term, ErrCorrupt, d, prev, count)
			}
			prev = int64(d)
			if d >= chunkEnd {
				c := d / chunkSize
				if c >= nChunks {
					return true, corrupt("document past the chunks")
				}
				start := uint64(0)
				if c > 0 {
					start = ends[c-1]
				}
				if dataStart+ends[c] > uint64(len(mem)) {
					return true, corrupt("chunk out of the file")
				}
				chunk, cp, chunkEnd = mem[dataStart+start:dataStart+ends[c]], 0, (c+1)*chunkSize
			}
			// The frequency (shifted left by one, the low bit saying
			// whether locations follow) and, when not 0, the norm's
			// bits: uvarints, most of them a byte.
			var fl uint64
			if cp < len(chunk) && chunk[cp] < 0x80 {
				fl, cp = uint64(chunk[cp]), cp+1
			} else {
				v, m := binary.Uvarint(chunk[min(cp, len(chunk)):])
				if m <= 0 {
					return true, corrupt("frequency")
				}
				fl, cp = v, cp+m
			}
			freq, normBits := fl>>1, uint64(0)
			if freq != 0 {
				if cp < len(chunk) && chunk[cp] < 0x80 {
					normBits, cp = uint64(chunk[cp]), cp+1
				} else {
					v, m := binary.Uvarint(chunk[min(cp, len(chunk)):])
					if m <= 0 {
						return true, corrupt("norm")
					}
					normBits, cp = v, cp+m
				}
			}
			if freq > math.MaxUint32 {
				return true, fmt.Errorf("fts: %s postings of %q: %w (frequency %d)", field, term, ErrCorrupt, freq)
			}
			var dl uint32
			if normBits < uint64(len(lens)) && lens[normBits] != 0 {
				dl = lens[normBits] - 1 // lens.length, inline
			} else if dl, err = lens.length(normBits); err != nil {
				return true, fmt.Errorf("fts: %s postings of %q: %w", field, term, err)
			}
			docs[k], post[k] = d32, fieldPosting{uint32(freq), dl}
			k++
		}
	}
	if k != len(docs) {
		return true, corrupt("bitmap count")
	}
	l.docs, l.post = docs, post
	end := at + bmLen
	if nChunks > 0 {
		end = max(end, dataStart+ends[nChunks-1])
	}
	releaseList(mem, min(val, freqOff), end)
	return true, nil
}

// zapLengthMemo holds, by a zap posting's norm bits, the field length
// they stand for plus 1 (0: not worked out yet), for the lengths that are
// valid: the length is a function of the bits, so a memo serves every
// list, and a length is checked once.
type zapLengthMemo [4096]uint32

var zapLengths = sync.Pool{New: func() any { return new(zapLengthMemo) }}

// length is the field length of a posting's norm bits; ErrCorrupt for
// bits that stand for no length.
func (m *zapLengthMemo) length(bits uint64) (uint32, error) {
	memo := bits < uint64(len(m))
	if memo && m[bits] != 0 {
		return m[bits] - 1, nil
	}
	dl := normLength(zapNorm(bits))
	if math.IsNaN(dl) || dl < 0 || dl > math.MaxUint32 {
		return 0, fmt.Errorf("%w (length %v)", ErrCorrupt, dl)
	}
	if memo && dl < math.MaxUint32 {
		m[bits] = uint32(dl) + 1
	}
	return uint32(dl), nil
}

// zapNorm is zapx's Posting.Norm for a posting's norm bits.
func zapNorm(bits uint64) float64 {
	return float64(float32(1.0 / math.Sqrt(float64(uint32(bits)))))
}

// uvarintAt reads a uvarint at mem[at:], n <= 0 when there is none.
func uvarintAt(mem []byte, at uint64) (uint64, int) {
	if at >= uint64(len(mem)) {
		return 0, 0
	}
	return binary.Uvarint(mem[at:])
}

// zapChunkSize is zapx's getChunkSize: the documents a chunk of a list
// of card postings covers in a segment of maxDocs documents.
func zapChunkSize(mode uint32, card, maxDocs uint64) (uint64, error) {
	switch {
	case mode == 0:
	case mode <= 1024:
		return uint64(mode), nil
	case mode == 1025:
		if card > 1024 {
			return 1024, nil
		}
		if maxDocs > 0 {
			return maxDocs, nil
		}
	case mode == 1026:
		if s := maxDocs / (card/1024 + 1); s > 0 {
			return s, nil
		}
	}
	return 0, errZapShape
}

// zapIterBufs holds readZapField's buffers of document numbers.
var zapIterBufs = sync.Pool{New: func() any { return new([256]uint32) }}
