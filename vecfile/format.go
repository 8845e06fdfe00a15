package vecfile

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"math"
	"time"
)

const (
	pageSize   = 4096 // header page of each file; rows start after it
	headerCopy = 2048 // the slots header page holds two copies of the header
	headerLen  = 60
	slotSize   = 48
	formatVer  = 1

	slotsName  = "slots"
	matrixName = "matrix"
	tmpSuffix  = ".tmp"

	flagLive = 1
)

var (
	slotsMagic  = [8]byte{'h', 'm', 'o', 'v', 'e', 'c', 's', '1'}
	matrixMagic = [8]byte{'h', 'm', 'o', 'v', 'e', 'c', 'm', '1'}
	castagnoli  = crc32.MakeTable(crc32.Castagnoli)
)

// header is the commit record of the index, kept in the slots file.
type header struct {
	format    Format
	dims      int
	gen       uint64 // incremented by every save; the copy at gen%2 is the newest
	n         uint64 // rows written and counted
	watermark uint64
	matrixID  uint64 // identity of the matrix file these slots go with
}

func (h *header) encode() []byte {
	b := make([]byte, headerLen)
	copy(b, slotsMagic[:])
	binary.LittleEndian.PutUint32(b[8:], formatVer)
	b[12] = byte(h.format)
	binary.LittleEndian.PutUint32(b[16:], uint32(h.dims))
	binary.LittleEndian.PutUint64(b[24:], h.gen)
	binary.LittleEndian.PutUint64(b[32:], h.n)
	binary.LittleEndian.PutUint64(b[40:], h.watermark)
	binary.LittleEndian.PutUint64(b[48:], h.matrixID)
	binary.LittleEndian.PutUint32(b[56:], crc32.Checksum(b[:56], castagnoli))
	return b
}

// decodeHeader reads one copy of the header. It never panics.
func decodeHeader(b []byte) (header, error) {
	var h header
	if len(b) < headerLen {
		return h, fmt.Errorf("%w: short header", ErrCorrupt)
	}
	if [8]byte(b[:8]) != slotsMagic {
		return h, fmt.Errorf("%w: bad magic", ErrCorrupt)
	}
	if crc32.Checksum(b[:56], castagnoli) != binary.LittleEndian.Uint32(b[56:]) {
		return h, fmt.Errorf("%w: header checksum", ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != formatVer {
		return h, fmt.Errorf("%w: file format %d, this hmo reads %d", ErrIncompatible, v, formatVer)
	}
	h.format = Format(b[12])
	h.dims = int(binary.LittleEndian.Uint32(b[16:]))
	h.gen = binary.LittleEndian.Uint64(b[24:])
	h.n = binary.LittleEndian.Uint64(b[32:])
	h.watermark = binary.LittleEndian.Uint64(b[40:])
	h.matrixID = binary.LittleEndian.Uint64(b[48:])
	if h.n > 1<<40 || h.dims <= 0 || h.dims > 1<<16 {
		return h, fmt.Errorf("%w: header counts", ErrCorrupt)
	}
	return h, nil
}

// newestHeader picks the valid header copy with the highest generation
// from the slots file's header page.
func newestHeader(page []byte) (header, error) {
	if len(page) < pageSize {
		return header{}, fmt.Errorf("%w: short header page", ErrCorrupt)
	}
	a, errA := decodeHeader(page[:headerCopy])
	b, errB := decodeHeader(page[headerCopy:])
	switch {
	case errA == nil && errB == nil:
		if b.gen > a.gen {
			return b, nil
		}
		return a, nil
	case errA == nil:
		return a, nil
	case errB == nil:
		return b, nil
	}
	return header{}, errA
}

// matrixHeader is the first bytes of the matrix file.
func matrixHeader(id uint64) []byte {
	b := make([]byte, 20)
	copy(b, matrixMagic[:])
	binary.LittleEndian.PutUint64(b[8:], id)
	binary.LittleEndian.PutUint32(b[16:], crc32.Checksum(b[:16], castagnoli))
	return b
}

func matrixIDOf(page []byte) (uint64, error) {
	if len(page) < 20 || [8]byte(page[:8]) != matrixMagic ||
		crc32.Checksum(page[:16], castagnoli) != binary.LittleEndian.Uint32(page[16:]) {
		return 0, fmt.Errorf("%w: matrix header", ErrCorrupt)
	}
	return binary.LittleEndian.Uint64(page[8:]), nil
}

// slot is the fixed part of a row, kept in the slots file.
type slot struct {
	id      uint64
	time    int64 // event time, Unix nanoseconds (timeNanos)
	scope   uint64
	session uint64
	flags   uint32
	scale   float32 // Int8: the component value of 127
}

// put writes s into b with the checksum of s and row, the row's vector.
func (s *slot) put(b, row []byte) {
	binary.LittleEndian.PutUint64(b[0:], s.id)
	binary.LittleEndian.PutUint64(b[8:], uint64(s.time))
	binary.LittleEndian.PutUint64(b[16:], s.scope)
	binary.LittleEndian.PutUint64(b[24:], s.session)
	binary.LittleEndian.PutUint32(b[32:], s.flags)
	binary.LittleEndian.PutUint32(b[36:], math.Float32bits(s.scale))
	binary.LittleEndian.PutUint32(b[40:], rowCRC(b, row))
	binary.LittleEndian.PutUint32(b[44:], 0)
}

// rowCRC is the checksum of a row: CRC-32C of its slot's fields and its
// vector, so that a row rewritten in place stays verifiable on its own.
func rowCRC(s, row []byte) uint32 {
	return crc32.Update(crc32.Checksum(s[:40], castagnoli), castagnoli, row)
}

// rowOK reports whether the slot s and its row are intact.
func rowOK(s, row []byte) bool {
	return binary.LittleEndian.Uint32(s[40:]) == rowCRC(s, row)
}

// Accessors read one field of the slot at b.
func slotID(b []byte) uint64      { return binary.LittleEndian.Uint64(b) }
func slotTime(b []byte) int64     { return int64(binary.LittleEndian.Uint64(b[8:])) }
func slotScope(b []byte) uint64   { return binary.LittleEndian.Uint64(b[16:]) }
func slotSession(b []byte) uint64 { return binary.LittleEndian.Uint64(b[24:]) }
func slotFlags(b []byte) uint32   { return binary.LittleEndian.Uint32(b[32:]) }
func slotScale(b []byte) float32  { return math.Float32frombits(binary.LittleEndian.Uint32(b[36:])) }

// labelHash is the value kept for a scope or session: 0 for none, else
// FNV-1a 64 of the label (never 0).
func labelHash(s string) uint64 {
	if s == "" {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(s))
	return max(h.Sum64(), 1)
}

// timeNanos is the value kept for an event time: Unix nanoseconds,
// clamped to the range they can represent.
func timeNanos(t time.Time) int64 {
	const lim = math.MaxInt64 / 1_000_000_000
	switch s := t.Unix(); {
	case s >= lim:
		return math.MaxInt64
	case s <= -lim:
		return math.MinInt64 + 1
	}
	return t.UnixNano()
}
