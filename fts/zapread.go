package fts

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

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
	lens := normLengths.Get().(*normLengthMemo)
	defer normLengths.Put(lens)
	docs, post := l.docs, l.post
	add := func(num, freq, normBits uint64) error {
		if k := len(docs); k > 0 && num <= uint64(docs[k-1]) || num >= count {
			return fmt.Errorf("fts: %s postings of %q: %w (document %d, of %d)", field, term, ErrCorrupt, num, count)
		}
		var dl float64
		if normBits < uint64(len(lens)) {
			if lens[normBits] == 0 {
				lens[normBits] = normLength(zapNorm(normBits)) + 1
			}
			dl = lens[normBits] - 1
		} else {
			dl = normLength(zapNorm(normBits))
		}
		if math.IsNaN(dl) || dl < 0 || dl > math.MaxUint32 || freq > math.MaxUint32 {
			return fmt.Errorf("fts: %s postings of %q: %w (frequency %d, length %v)", field, term, ErrCorrupt, freq, dl)
		}
		docs = append(docs, uint32(num))
		post = append(post, fieldPosting{uint32(freq), uint32(dl)})
		return nil
	}
	if val&zap.FSTValEncodingMask == zap.FSTValEncoding1Hit {
		num, normBits := zap.FSTValDecode1Hit(val)
		if err := add(num, 1, normBits); err != nil {
			return true, err
		}
		l.docs, l.post = docs, post
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
	var chunk []byte
	cur := uint64(math.MaxUint64)
	it := bm.ManyIterator()
	var buf [256]uint32
	seen := uint64(0)
	for {
		got := it.NextMany(buf[:])
		if got == 0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return true, err
		}
		for _, d := range buf[:got] {
			if c := uint64(d) / chunkSize; c != cur {
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
				chunk, cur = mem[dataStart+start:dataStart+ends[c]], c
			}
			fl, k := binary.Uvarint(chunk)
			if k <= 0 {
				return true, corrupt("frequency")
			}
			chunk = chunk[k:]
			freq, normBits := fl>>1, uint64(0)
			if freq != 0 {
				if normBits, k = binary.Uvarint(chunk); k <= 0 {
					return true, corrupt("norm")
				}
				chunk = chunk[k:]
			}
			if err := add(uint64(d), freq, normBits); err != nil {
				return true, err
			}
		}
		seen += uint64(got)
	}
	if seen != card {
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
