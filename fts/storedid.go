package fts

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"
	zap "github.com/blevesearch/zapx/v17"
)

// A search's hits are named by their stored _id, which bleve reads
// through the segment's mapping of its file. The hits of a large
// segment are spread over its stored section (29 bytes a document on
// the 1M peers store: an 8-byte offset in the stored index, and the
// entry it points to; 19.7 MB of its 103 MB segment), and each read maps
// the pages around it (the kernel's fault-around, 64 KiB) into the
// process: after the workload's 200 questions, 19.6 of the 22.8 MB the
// querying process held of that segment were the stored section
// (BENCHMARKS.md). Those pages are page cache either way; mapped, they
// count in the process's resident set. The ids of the documents of a
// segment at least storedIDsPreadMin long are therefore read with pread
// from its file (two reads, about a microsecond each), which maps no
// page; a smaller segment's are read through bleve.

// storedIDsPreadMin is the length, in bytes, of a segment's file from
// which its documents' ids are read with pread (a variable for the
// tests): a segment's stored section is about a fifth of its file (0.17
// to 0.19 in the 1M peers store's three largest segments), so below this
// length a search maps at most about 3 MB of it.
var storedIDsPreadMin = 16 << 20

// storedIDEntryRead is the bytes read at a document's stored entry:
// enough for its two lengths, its metadata's first varint and an id of
// 20 digits, when it stores no other field.
const storedIDEntryRead = 48

// storedIDFiles reads stored ids by pread, one open file per segment,
// for one search: close closes them. The zero value is ready. Not safe
// for concurrent use.
type storedIDFiles struct {
	files map[uint64]*os.File // by segment id; nil: not read this way
	buf   [storedIDEntryRead]byte
}

func (f *storedIDFiles) close() {
	for _, file := range f.files {
		if file != nil {
			file.Close()
		}
	}
}

// file returns seg and its open file when its ids are read by pread;
// nil when they are read through bleve: a segment in memory or short, a
// file read through a reader hook (index.ReaderHook, for encrypted
// files), another zap version, a file that does not open.
func (f *storedIDFiles) file(seg *scorch.SegmentSnapshot) (*zap.Segment, *os.File) {
	zs, ok := seg.Segment().(*zap.Segment)
	if !ok || index.ReaderHook != nil || zs.Version() != zap.Version || len(zs.Data()) < storedIDsPreadMin || zs.Path() == "" {
		return nil, nil
	}
	file, seen := f.files[seg.Id()]
	if !seen {
		if f.files == nil {
			f.files = map[uint64]*os.File{}
		}
		var err error
		if file, err = os.Open(zs.Path()); err != nil {
			file = nil // read through the mapping as before
		}
		f.files[seg.Id()] = file
	}
	if file == nil {
		return nil, nil
	}
	return zs, file
}

// recordID returns the record id of document doc of seg read from its
// file, and ok false when seg's ids are read through bleve.
func (f *storedIDFiles) recordID(seg *scorch.SegmentSnapshot, doc uint64) (id uint64, ok bool, err error) {
	zs, file := f.file(seg)
	if zs == nil {
		return 0, false, nil
	}
	ext, err := f.read(file, zs, doc)
	if err == nil {
		id, err = strconv.ParseUint(string(ext), 10, 64)
	}
	if err != nil {
		return 0, true, fmt.Errorf("%w: document %d of %s: %w", ErrCorrupt, doc, zs.Path(), err)
	}
	return id, true, nil
}

// read returns the _id of document doc of zs from file (its errors name
// neither the package nor the document), laid out as zapx
// writes it (new.go, writeStoredFields): the document's 8-byte
// big-endian offset at StoredIndexOffset+8*doc; there, its metadata's
// and data's lengths as uvarints, the metadata, whose first uvarint is
// the id's length, and the data, which starts with the id.
func (f *storedIDFiles) read(file *os.File, zs *zap.Segment, doc uint64) ([]byte, error) {
	end := uint64(len(zs.Data())) // the file's length
	if doc >= zs.NumDocs() {
		return nil, fmt.Errorf("the segment has %d documents", zs.NumDocs())
	}
	at := zs.StoredIndexOffset() + 8*doc
	if at+8 > end || at < zs.StoredIndexOffset() {
		return nil, errors.New("its stored index is past the file's end")
	}
	if _, err := file.ReadAt(f.buf[:8], int64(at)); err != nil {
		return nil, err
	}
	off := binary.BigEndian.Uint64(f.buf[:8])
	if off >= end {
		return nil, errors.New("its stored entry is past the file's end")
	}
	b := f.buf[:min(uint64(len(f.buf)), end-off)]
	if _, err := file.ReadAt(b, int64(off)); err != nil {
		return nil, err
	}
	start, idLen, ok := storedIDAt(b, end-off)
	if !ok {
		return nil, errors.New("its stored entry does not parse")
	}
	if idLen > 20 { // a record id has at most 20 digits
		return nil, fmt.Errorf("its id is %d bytes", idLen)
	}
	if start+idLen <= uint64(len(b)) {
		return b[start : start+idLen], nil
	}
	// Past the read: other stored fields' metadata.
	id := make([]byte, idLen)
	if _, err := file.ReadAt(id, int64(off+start)); err != nil {
		return nil, err
	}
	return id, nil
}

// storedIDAt parses a stored entry's start b, read at an offset from
// which the file holds room bytes (len(b) is at most room, and all of
// them when the entry is shorter than storedIDEntryRead), and returns
// where its id starts and its length: the id lies in the file from the
// offset, and in b when start+n <= len(b). ok is false for an entry that
// does not parse or does not fit in room.
func storedIDAt(b []byte, room uint64) (start, n uint64, ok bool) {
	metaLen, m := binary.Uvarint(b)
	if m <= 0 {
		return 0, 0, false
	}
	dataLen, d := binary.Uvarint(b[m:])
	if d <= 0 {
		return 0, 0, false
	}
	meta := uint64(m + d) // where the metadata starts
	if metaLen > room || dataLen > room || meta+metaLen+dataLen > room || meta >= uint64(len(b)) {
		return 0, 0, false
	}
	idLen, l := binary.Uvarint(b[meta:min(meta+metaLen, uint64(len(b)))])
	if l <= 0 || idLen > dataLen {
		return 0, 0, false
	}
	return meta + metaLen, idLen, true
}
