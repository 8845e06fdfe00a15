package engine

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Record encodings. recordV1 is the layout of stores written before the
// binary codec; it is still read. New records are written as recordV2.
const (
	recordV1       = 1 // [1][flags][uvarint len(meta)][meta JSON][text, maybe zstd]
	recordV2       = 2 // [2][flags][binary fields (encodeFields)][text, maybe zstd]
	flagCompressed = 1 << 0
)

var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
)

func zstdCodecs() (*zstd.Encoder, *zstd.Decoder) {
	zstdOnce.Do(func() {
		// Both are safe for concurrent EncodeAll/DecodeAll; options are
		// static, so errors cannot happen.
		zstdEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
		zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(64<<20))
	})
	return zstdEnc, zstdDec
}

// encodeRecord lays a record out as
// [2][flags][fields, see encodeFields][text, maybe zstd].
func encodeRecord(r *Record, compressAbove int) ([]byte, error) {
	text := []byte(r.Text)
	var flags byte
	if len(text) > compressAbove {
		enc, _ := zstdCodecs()
		if c := enc.EncodeAll(text, nil); len(c) < len(text) {
			text, flags = c, flagCompressed
		}
	}
	out := make([]byte, 0, 64+len(r.Scope)+len(r.Session)+len(r.Role)+len(r.Summary)+len(text))
	out = append(out, recordV2, flags)
	out = encodeFields(out, r)
	return append(out, text...), nil
}

// encodeFields appends every field of r but Text, in a fixed order:
// uvarint ID; strings Scope, Session, Role; times Time, Created; strings
// Summary, SummaryKind; uvarint count and strings of Sources; uvarints
// Prev, Supersedes, SupersededBy; the header: float64 I0, uvarint N, time
// LastUsed, float64 P, byte Tier. A string is a uvarint length and its
// bytes, a time a varint of Unix seconds and a uvarint of nanoseconds
// (UTC), a float64 its 8 IEEE 754 bytes, little-endian.
func encodeFields(b []byte, r *Record) []byte {
	b = binary.AppendUvarint(b, r.ID)
	b = appendString(b, r.Scope)
	b = appendString(b, r.Session)
	b = appendString(b, r.Role)
	b = appendTime(b, r.Time)
	b = appendTime(b, r.Created)
	b = appendString(b, r.Summary)
	b = appendString(b, r.SummaryKind)
	b = binary.AppendUvarint(b, uint64(len(r.Sources)))
	for _, s := range r.Sources {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, r.Prev)
	b = binary.AppendUvarint(b, r.Supersedes)
	b = binary.AppendUvarint(b, r.SupersededBy)
	return appendHeader(b, &r.Header)
}

// appendHeader appends the header fields of encodeFields, its last ones.
func appendHeader(b []byte, h *Header) []byte {
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(h.I0))
	b = binary.AppendUvarint(b, uint64(h.N))
	b = appendTime(b, h.LastUsed)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(h.P))
	return append(b, h.Tier)
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendTime(b []byte, t time.Time) []byte {
	return binary.AppendUvarint(binary.AppendVarint(b, t.Unix()), uint64(t.Nanosecond()))
}

// fieldReader reads what encodeFields wrote; the first error sticks.
type fieldReader struct {
	b   []byte
	err error
}

func (f *fieldReader) fail(what string) {
	if f.err == nil {
		f.err = fmt.Errorf("%w: bad %s", ErrCorrupt, what)
	}
	f.b = nil
}

func (f *fieldReader) uvarint(what string) uint64 {
	v, n := binary.Uvarint(f.b)
	if n <= 0 {
		f.fail(what)
		return 0
	}
	f.b = f.b[n:]
	return v
}

func (f *fieldReader) str(what string) string {
	n := f.uvarint(what)
	if n > uint64(len(f.b)) {
		f.fail(what)
		return ""
	}
	s := string(f.b[:n])
	f.b = f.b[n:]
	return s
}

func (f *fieldReader) time(what string) time.Time {
	sec, n := binary.Varint(f.b)
	if n <= 0 {
		f.fail(what)
		return time.Time{}
	}
	f.b = f.b[n:]
	ns := f.uvarint(what)
	if ns >= 1e9 {
		f.fail(what)
		return time.Time{}
	}
	return time.Unix(sec, int64(ns)).UTC()
}

func (f *fieldReader) f64(what string) float64 {
	if len(f.b) < 8 {
		f.fail(what)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(f.b))
	f.b = f.b[8:]
	return v
}

func (f *fieldReader) byte1(what string) byte {
	if len(f.b) < 1 {
		f.fail(what)
		return 0
	}
	v := f.b[0]
	f.b = f.b[1:]
	return v
}

// decodeFields reverses encodeFields and returns the bytes after them.
func decodeFields(b []byte, r *Record) ([]byte, error) {
	f := fieldReader{b: b}
	decodeBody(&f, r)
	decodeHeader(&f, &r.Header)
	return f.b, f.err
}

// decodeBody reads the fields of encodeFields before the header.
func decodeBody(f *fieldReader, r *Record) {
	r.ID = f.uvarint("id")
	r.Scope, r.Session, r.Role = f.str("scope"), f.str("session"), f.str("role")
	r.Time, r.Created = f.time("time"), f.time("created")
	r.Summary, r.SummaryKind = f.str("summary"), f.str("summary kind")
	if n := f.uvarint("sources"); n > uint64(len(f.b)) {
		f.fail("sources")
	} else if n > 0 {
		r.Sources = make([]string, n)
		for i := range r.Sources {
			r.Sources[i] = f.str("source")
		}
	}
	r.Prev, r.Supersedes, r.SupersededBy = f.uvarint("prev"), f.uvarint("supersedes"), f.uvarint("superseded by")
}

// decodeHeader reads the header fields of encodeFields (appendHeader).
func decodeHeader(f *fieldReader, h *Header) {
	h.I0 = f.f64("i0")
	if n := f.uvarint("n"); n > math.MaxUint32 {
		f.fail("n")
	} else {
		h.N = uint32(n)
	}
	h.LastUsed = f.time("t_last")
	h.P = f.f64("p")
	h.Tier = f.byte1("tier")
}

// decodeRecord reverses encodeRecord, and reads the JSON layout of
// version 1 too. It never panics on bad input.
func decodeRecord(b []byte) (Record, error) {
	var r Record
	if len(b) < 3 {
		return r, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	flags := b[1]
	var text []byte
	switch b[0] {
	case recordV1:
		n, k := binary.Uvarint(b[2:])
		if k <= 0 || n > uint64(len(b)-2-k) {
			return r, fmt.Errorf("%w: bad length", ErrCorrupt)
		}
		if err := decodeMetaV1(b[2+k:2+k+int(n)], &r); err != nil {
			return r, err
		}
		text = b[2+k+int(n):]
	case recordV2:
		var err error
		if text, err = decodeFields(b[2:], &r); err != nil {
			return Record{}, err
		}
	default:
		return r, fmt.Errorf("%w: record version %d", ErrCorrupt, b[0])
	}
	if flags&flagCompressed != 0 {
		_, dec := zstdCodecs()
		t, err := dec.DecodeAll(text, nil)
		if err != nil {
			return r, fmt.Errorf("%w: text: %v", ErrCorrupt, err)
		}
		text = t
	}
	r.Text = string(text)
	return r, nil
}

// decodeMetaV1 reads version 1's JSON metadata into r. It unmarshals into
// a record of its own and copies it: r's address given to json.Unmarshal
// would move decodeRecord's record to the heap on every call, version 2's
// (all records written now) included.
func decodeMetaV1(meta []byte, r *Record) error {
	var v Record
	if err := json.Unmarshal(meta, &v); err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	*r = v
	return nil
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte, dims int) ([]float32, error) {
	if len(b) != 4*dims {
		return nil, fmt.Errorf("%w: vector is %d bytes, want %d", ErrDims, len(b), 4*dims)
	}
	v := make([]float32, dims)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

func u64key(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func keyU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}
