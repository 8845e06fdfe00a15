package engine

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
)

// The bbolt file layout that rawRecords reads (bbolt 1.x, as written on
// a little-endian machine with 64-bit page ids).
const (
	pageHeaderSize  = 16 // id uint64, flags uint16, count uint16, overflow uint32
	leafElementSize = 16 // flags, pos, ksize, vsize: uint32 each
	leafPageFlag    = 0x02
	freelistFlag    = 0x10
	bucketLeafFlag  = 0x01 // a leaf element whose value is a bucket
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	noFreelist      = ^uint64(0) // meta.freelist when the freelist is not synced
	metaChecksumAt  = 56         // the meta's FNV-64a covers its first 56 bytes
)

// rawRecord is where a record was found by reading pages directly.
type rawRecord struct {
	id  uint64
	off int64 // of its encoded value in the file
	n   int   // the value's length
}

// rawRecords reads the bbolt file at path page by page, without walking
// its B+trees, and returns, sorted by id, every record found on a live
// leaf page: a leaf element whose key is 8 bytes and whose value decodes
// as a record with that id. It is what salvage falls back on when the
// pages that lead to the records (the bucket list, a branch page) are
// damaged while the records' own pages are not.
//
// Pages on the freelist are skipped: they hold versions a commit left
// behind, and records that were deleted (delete means gone). So are the
// pages past the meta's high-water mark. Without a readable meta page
// and freelist, it returns an error and no records: it cannot tell live
// pages from freed ones.
func rawRecords(path string) ([]rawRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := readRawMeta(f)
	if err != nil {
		return nil, err
	}
	ps := int64(m.pageSize)
	free, err := readRawFreelist(f, m)
	if err != nil {
		return nil, err
	}
	var out []rawRecord
	buf := make([]byte, ps)
	for id := uint64(2); id < m.pgid; id++ {
		if _, ok := free[id]; ok {
			continue
		}
		off := int64(id) * ps
		if _, err := f.ReadAt(buf[:ps], off); err != nil {
			break // the file ends before the high-water mark: a cut file
		}
		h := binary.LittleEndian
		if h.Uint64(buf) != id { // damaged, or the continuation of a large page
			continue
		}
		flags, count, overflow := h.Uint16(buf[8:]), int(h.Uint16(buf[10:])), uint64(h.Uint32(buf[12:]))
		if flags != leafPageFlag || overflow >= m.pgid-id {
			id += min(overflow, m.pgid-id)
			continue
		}
		page := buf
		if overflow > 0 {
			page = make([]byte, int64(overflow+1)*ps)
			if _, err := f.ReadAt(page, off); err != nil {
				break
			}
		}
		out = appendRawLeaf(out, page, count, off)
		id += overflow
	}
	slices.SortStableFunc(out, func(a, b rawRecord) int { return cmp.Compare(a.id, b.id) })
	// An id twice would be a record key in two buckets, which a live
	// store does not have: keep the first.
	return slices.CompactFunc(out, func(a, b rawRecord) bool { return a.id == b.id }), nil
}

// appendRawLeaf appends the records of one leaf page (with its overflow
// pages), read from file offset off.
func appendRawLeaf(out []rawRecord, page []byte, count int, off int64) []rawRecord {
	h := binary.LittleEndian
	for i := range count {
		at := pageHeaderSize + i*leafElementSize
		if at+leafElementSize > len(page) {
			break
		}
		el := page[at:]
		flags, pos, ksize, vsize := h.Uint32(el), int(h.Uint32(el[4:])), int(h.Uint32(el[8:])), int(h.Uint32(el[12:]))
		k := at + pos
		if flags&bucketLeafFlag != 0 || ksize != 8 || vsize < 3 || pos < 0 || k < at || k+ksize+vsize > len(page) {
			continue
		}
		val := page[k+ksize : k+ksize+vsize]
		if val[0] != recordV1 && val[0] != recordV2 {
			continue
		}
		id := binary.BigEndian.Uint64(page[k:])
		if r, err := decodeRecord(val); err != nil || r.ID != id || id == 0 {
			continue
		}
		out = append(out, rawRecord{id: id, off: off + int64(k+ksize), n: vsize})
	}
	return out
}

// rawMeta is the part of a bbolt meta page rawRecords uses.
type rawMeta struct {
	pageSize uint32
	freelist uint64
	pgid     uint64 // the high-water mark: pages at or past it are unused
	txid     uint64
}

// readRawMeta returns the valid meta page (of the two) with the higher
// transaction id.
func readRawMeta(f io.ReaderAt) (rawMeta, error) {
	var best rawMeta
	found := false
	first := make([]byte, 4096)
	n, _ := f.ReadAt(first, 0)
	offsets := []int64{0}
	if m, ok := parseRawMeta(first[:n]); ok {
		offsets = append(offsets, int64(m.pageSize))
	} else {
		offsets = append(offsets, 4096, 8192, 16384, 32768, 65536)
	}
	buf := make([]byte, pageHeaderSize+metaChecksumAt+8)
	for _, off := range offsets {
		if _, err := f.ReadAt(buf, off); err != nil {
			continue
		}
		m, ok := parseRawMeta(buf)
		if !ok || (off != 0 && int64(m.pageSize) != off) {
			continue
		}
		if !found || m.txid > best.txid {
			best, found = m, true
		}
	}
	if !found {
		return best, errors.New("no valid meta page")
	}
	return best, nil
}

// parseRawMeta checks and reads a meta page.
func parseRawMeta(b []byte) (rawMeta, bool) {
	if len(b) < pageHeaderSize+metaChecksumAt+8 {
		return rawMeta{}, false
	}
	h := binary.LittleEndian
	m := b[pageHeaderSize:]
	sum := fnv.New64a()
	sum.Write(m[:metaChecksumAt])
	if h.Uint32(m) != boltMagic || h.Uint32(m[4:]) != boltVersion || h.Uint64(m[metaChecksumAt:]) != sum.Sum64() {
		return rawMeta{}, false
	}
	ps := h.Uint32(m[8:])
	if ps < 512 || ps > 1<<20 || ps&(ps-1) != 0 {
		return rawMeta{}, false
	}
	return rawMeta{pageSize: ps, freelist: h.Uint64(m[32:]), pgid: h.Uint64(m[40:]), txid: h.Uint64(m[48:])}, true
}

// readRawFreelist returns the ids of the free pages, the freelist's own
// pages among them.
func readRawFreelist(f io.ReaderAt, m rawMeta) (map[uint64]struct{}, error) {
	if m.freelist == noFreelist || m.freelist < 2 || m.freelist >= m.pgid {
		return nil, fmt.Errorf("no freelist page (%d)", m.freelist)
	}
	ps := int64(m.pageSize)
	head := make([]byte, ps)
	if _, err := f.ReadAt(head, int64(m.freelist)*ps); err != nil {
		return nil, fmt.Errorf("freelist: %v", err)
	}
	h := binary.LittleEndian
	overflow := uint64(h.Uint32(head[12:]))
	if h.Uint64(head) != m.freelist || h.Uint16(head[8:]) != freelistFlag || overflow >= m.pgid-m.freelist {
		return nil, errors.New("the freelist page is damaged")
	}
	page := head
	if overflow > 0 {
		page = make([]byte, int64(overflow+1)*ps)
		if _, err := f.ReadAt(page, int64(m.freelist)*ps); err != nil {
			return nil, fmt.Errorf("freelist: %v", err)
		}
	}
	count, at := uint64(h.Uint16(head[10:])), pageHeaderSize
	if count == 0xFFFF { // the count did not fit: it is the first element
		count, at = h.Uint64(page[pageHeaderSize:]), pageHeaderSize+8
	}
	if count > uint64(len(page)-at)/8 {
		return nil, errors.New("the freelist page is damaged")
	}
	free := make(map[uint64]struct{}, count+overflow+1)
	for i := range count {
		free[h.Uint64(page[at+8*int(i):])] = struct{}{}
	}
	for id := m.freelist; id <= m.freelist+overflow; id++ {
		free[id] = struct{}{}
	}
	return free, nil
}
