package persona

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Encoding, version 1 (little-endian):
//
//	magic "HMOP", version u8
//	dims u32, updates u64, firings u64, scale f64
//	if updates > 0: p [dims]f64, anchor [dims]f64, anchor time
//	terms:      count u32, then text (u8 length + bytes), raw f64, last u64, sorted by text
//	statements: count u32, then text (u16 length + bytes), importance f64, time
//	history:    count u32, then time, update u64, drift f64, terms (u8 count, each u8 length + bytes)
//	CRC-32C of everything before, u32
//
// A time is its Unix seconds (i64) and nanoseconds (u32), in UTC.
const (
	magic   = "HMOP"
	version = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary encodes the persona's state (not its Options), versioned
// and checksummed, for UnmarshalBinary. The encoding is deterministic.
func (p *Persona) MarshalBinary() ([]byte, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	size := 64 + 16*len(p.p) + 40*len(p.terms) + 64*len(p.history)
	for _, s := range p.stmts {
		size += 22 + len(s.Text)
	}
	b := append(make([]byte, 0, size), magic...)
	b = append(b, version)
	b = binary.LittleEndian.AppendUint32(b, uint32(p.dims))
	b = binary.LittleEndian.AppendUint64(b, p.updates)
	b = binary.LittleEndian.AppendUint64(b, p.firings)
	b = appendFloat(b, p.scale)
	if p.updates > 0 {
		for _, v := range [][]float64{p.p, p.anchor} {
			for _, f := range v {
				b = appendFloat(b, f)
			}
		}
		b = appendTime(b, p.anchorTime)
	}
	keys := make([]string, 0, len(p.terms))
	for t := range p.terms {
		keys = append(keys, t)
	}
	slices.Sort(keys)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(keys)))
	for _, t := range keys {
		b = append(append(b, byte(len(t))), t...)
		b = appendFloat(b, p.terms[t].raw)
		b = binary.LittleEndian.AppendUint64(b, p.terms[t].last)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p.stmts)))
	for _, s := range p.stmts {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(s.Text)))
		b = append(b, s.Text...)
		b = appendFloat(b, s.Importance)
		b = appendTime(b, s.Time)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p.history)))
	for _, h := range p.history {
		b = appendTime(b, h.Time)
		b = binary.LittleEndian.AppendUint64(b, h.Update)
		b = appendFloat(b, h.Drift)
		b = append(b, byte(len(h.Terms)))
		for _, t := range h.Terms {
			b = append(append(b, byte(len(t))), t...)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// UnmarshalBinary replaces the persona's state with one encoded by
// MarshalBinary. The Options stay those of New: a state with more terms,
// statements or snapshots than they allow is cut to the best ones, and a
// state of another dimension than a fixed Options.Dims is refused with
// ErrDims. Malformed input fails with ErrCorrupt (or ErrVersion) and
// changes nothing; it never panics.
func (p *Persona) UnmarshalBinary(data []byte) error {
	s, err := p.decode(data)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dims, p.p, p.anchor, p.anchorTime = s.dims, s.p, s.anchor, s.anchorTime
	p.updates, p.firings, p.terms, p.scale = s.updates, s.firings, s.terms, s.scale
	p.stmts, p.history = s.stmts, s.history
	if len(p.terms) > p.opts.TermCapacity {
		p.pruneTerms(p.opts.TermCapacity)
	}
	p.sortStatements()
	if over := len(p.history) - p.lim.history; over > 0 {
		p.history = slices.Delete(p.history, 0, over)
	}
	return nil
}

// decode parses data into a fresh Persona value (no lock held).
func (p *Persona) decode(data []byte) (*Persona, error) {
	if len(data) < len(magic)+1+4 || string(data[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	if v := data[len(magic)]; v != version {
		return nil, fmt.Errorf("%w: version %d", ErrVersion, v)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	r := &reader{b: body[len(magic)+1:]}
	s := &Persona{terms: map[string]*termStat{}}
	s.dims = int(r.u32())
	s.updates, s.firings = r.u64(), r.u64()
	s.scale = r.float(func(f float64) bool { return f >= minScale && f <= 1 })
	if r.err == nil && (s.dims > MaxDims || s.firings > s.updates || (s.updates > 0 && s.dims == 0)) {
		r.fail("counts")
	}
	if r.err == nil && p.opts.Dims != 0 && s.dims != 0 && s.dims != p.opts.Dims {
		return nil, fmt.Errorf("%w: encoded %d, want %d", ErrDims, s.dims, p.opts.Dims)
	}
	if r.err == nil && s.updates > 0 {
		s.p, s.anchor = r.unitVector(s.dims), r.unitVector(s.dims)
		s.anchorTime = r.time()
	}
	if s.dims == 0 {
		s.dims = p.opts.Dims
	}
	r.decodeTerms(s)
	n := r.count(2 + 8 + 12)
	for range n {
		st := Statement{Text: r.str(int(r.u16()))}
		st.Importance = r.float(func(f float64) bool { return f >= 0 && f <= 10 })
		st.Time = r.time()
		s.stmts = append(s.stmts, st)
	}
	n = r.count(12 + 8 + 8 + 1)
	for range n {
		h := Snapshot{Time: r.time(), Update: r.u64(), Terms: []string{}}
		h.Drift = r.float(func(f float64) bool { return f >= 0 && f <= 2 })
		for range int(r.u8()) {
			h.Terms = append(h.Terms, r.str(int(r.u8())))
		}
		s.history = append(s.history, h)
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes")
	}
	if r.err != nil {
		return nil, r.err
	}
	return s, nil
}

func (r *reader) decodeTerms(s *Persona) {
	n := r.count(1 + 8 + 8)
	prev := ""
	for i := range n {
		t := r.str(int(r.u8()))
		st := &termStat{raw: r.float(func(f float64) bool { return f >= 0 }), last: r.u64()}
		if r.err != nil {
			return
		}
		if (i > 0 && t <= prev) || t == "" {
			r.fail("terms out of order")
			return
		}
		prev = t
		s.terms[t] = st
	}
}

// reader reads the encoding; the first error sticks and every later read
// returns zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrCorrupt, what)
	}
}

func (r *reader) next(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.fail("truncated")
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) u8() uint8 {
	if b := r.next(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if b := r.next(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.next(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.next(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// count reads a u32 element count and checks the remaining bytes can hold
// that many elements of at least minSize bytes each.
func (r *reader) count(minSize int) int {
	n := r.u32()
	if r.err == nil && uint64(n)*uint64(minSize) > uint64(len(r.b)) {
		r.fail("count exceeds data")
		return 0
	}
	return int(n)
}

// float reads a finite float64 that satisfies ok.
func (r *reader) float(ok func(float64) bool) float64 {
	f := math.Float64frombits(r.u64())
	if r.err == nil && (math.IsNaN(f) || math.IsInf(f, 0) || !ok(f)) {
		r.fail("value out of range")
		return 0
	}
	return f
}

func (r *reader) str(n int) string {
	b := r.next(n)
	if r.err == nil && (!utf8.Valid(b) || strings.ContainsRune(string(b), 0)) {
		r.fail("invalid text")
		return ""
	}
	return string(b)
}

func (r *reader) time() time.Time {
	sec, nsec := int64(r.u64()), r.u32()
	t := time.Unix(sec, int64(nsec)).UTC()
	if r.err == nil && (nsec >= 1e9 || t.Unix() != sec) {
		r.fail("time")
		return time.Time{}
	}
	return t
}

// unitVector reads dims finite components of a vector of norm 1.
func (r *reader) unitVector(dims int) []float64 {
	if r.err == nil && dims*8 > len(r.b) {
		r.fail("truncated")
		return nil
	}
	v := make([]float64, dims)
	for i := range v {
		v[i] = r.float(func(float64) bool { return true })
	}
	if r.err == nil && math.Abs(norm(v)-1) > 1e-9 {
		r.fail("vector not unit length")
	}
	return v
}

func appendFloat(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

func appendTime(b []byte, t time.Time) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(t.Unix()))
	return binary.LittleEndian.AppendUint32(b, uint32(t.Nanosecond()))
}
