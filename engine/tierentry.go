package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"

	"github.com/hmo-dev/hmo/tiers"
)

// entryV1 is the first byte of a binary tier entry (encodeEntry). Stores
// written before it hold JSON entries, whose first byte is '{'; both are
// read.
const entryV1 = 1

// encodeEntry lays a tier entry of the active bucket out as [entryV1]
// then, in the codec's encodings (encodeFields): uvarint ID, string
// Session, uvarint SessionSeq, float64 I0, uvarint N, time LastUsed,
// float64 Sp, float64 P, byte Tier. An import writes one per admitted
// record, and json.Marshal's reflection was most of that write.
func encodeEntry(en *tiers.Entry) []byte {
	b := make([]byte, 0, 56+len(en.Session))
	b = append(b, entryV1)
	b = binary.AppendUvarint(b, en.ID)
	b = appendString(b, en.Session)
	b = binary.AppendUvarint(b, en.SessionSeq)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(en.I0))
	b = binary.AppendUvarint(b, uint64(en.N))
	b = appendTime(b, en.LastUsed)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(en.Sp))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(en.P))
	return append(b, en.Tier)
}

// decodeEntry reads a tier entry of the active bucket: the binary layout
// of encodeEntry (LastUsed read back in UTC, as record headers are), or
// the JSON of older stores as json.Unmarshal reads it. A tiered open
// reads every entry of Tiers 1 and 2 (4,352 by default) and
// encoding/json's reflection was most of that: the JSON entries older
// versions wrote (json.Marshal of tiers.Entry: its fields in order, no
// escapes in the session key) are read field by field; anything else
// goes to json.Unmarshal, whose result and errors are the reference.
func decodeEntry(b []byte) (tiers.Entry, error) {
	if len(b) > 0 && b[0] == entryV1 {
		return binaryEntry(b[1:])
	}
	if en, ok := fastEntry(b); ok {
		return en, nil
	}
	var en tiers.Entry
	err := json.Unmarshal(b, &en)
	return en, err
}

// binaryEntry reverses encodeEntry after its version byte.
func binaryEntry(b []byte) (tiers.Entry, error) {
	var en tiers.Entry
	f := fieldReader{b: b}
	en.ID = f.uvarint("entry id")
	en.Session = f.str("entry session")
	en.SessionSeq = f.uvarint("entry session ordinal")
	en.I0 = f.f64("entry i0")
	if n := f.uvarint("entry n"); n > math.MaxUint32 {
		f.fail("entry n")
	} else {
		en.N = uint32(n)
	}
	en.LastUsed = f.time("entry t_last")
	en.Sp = f.f64("entry sp")
	en.P = f.f64("entry p")
	en.Tier = f.byte1("entry tier")
	if f.err == nil && len(f.b) != 0 {
		f.fail("entry length")
	}
	if f.err != nil {
		return tiers.Entry{}, f.err
	}
	return en, nil
}

// withHeader returns the stored record b with its header replaced by h:
// what decodeRecord, setting Header and encodeRecord give, without
// decoding the text (nor decompressing and compressing it again). A tier
// entry leaving the active tiers writes its header back into its record
// this way. Records of the JSON layout (recordV1) are decoded and
// encoded again, in the current layout.
func withHeader(b []byte, h Header, compressAbove int) ([]byte, error) {
	if len(b) < 3 || b[0] != recordV2 {
		r, err := decodeRecord(b)
		if err != nil {
			return nil, err
		}
		r.Header = h
		return encodeRecord(&r, compressAbove)
	}
	var old Record
	f := fieldReader{b: b[2:]}
	decodeBody(&f, &old)
	head := len(b) - len(f.b) // where the header starts
	decodeHeader(&f, &old.Header)
	if f.err != nil {
		return nil, f.err
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:head]...)
	out = appendHeader(out, &h)
	return append(out, f.b...), nil // the text, as stored
}

// recordHeader reads the header of the stored record b.
func recordHeader(b []byte) (Header, error) {
	if len(b) < 3 || b[0] != recordV2 {
		r, err := decodeRecord(b)
		return r.Header, err
	}
	var r Record
	f := fieldReader{b: b[2:]}
	decodeBody(&f, &r)
	decodeHeader(&f, &r.Header)
	return r.Header, f.err
}

// fastEntry parses the layout json.Marshal gives a tiers.Entry; ok is
// false for any other input.
func fastEntry(b []byte) (en tiers.Entry, ok bool) {
	p := entryParser{b: b}
	if !p.lit(`{"ID":`) {
		return en, false
	}
	en.ID = p.uint(64)
	if !p.lit(`,"Session":"`) {
		return en, false
	}
	end := bytes.IndexByte(p.b, '"')
	if end < 0 {
		return en, false
	}
	s := p.b[:end]
	for _, c := range s {
		if c < 0x20 || c == '\\' || c >= 0x80 {
			return en, false // escapes and non-ASCII: json.Unmarshal's
		}
	}
	en.Session = string(s)
	p.b = p.b[end+1:]
	if !p.lit(`,"SessionSeq":`) {
		return en, false
	}
	en.SessionSeq = p.uint(64)
	if !p.lit(`,"I0":`) {
		return en, false
	}
	en.I0 = p.float()
	if !p.lit(`,"N":`) {
		return en, false
	}
	en.N = uint32(p.uint(32))
	if !p.lit(`,"LastUsed":`) {
		return en, false
	}
	end = bytes.IndexByte(p.b[min(1, len(p.b)):], '"') + 2
	if end < 2 || p.bad || en.LastUsed.UnmarshalJSON(p.b[:end]) != nil {
		return en, false
	}
	p.b = p.b[end:]
	if !p.lit(`,"Sp":`) {
		return en, false
	}
	en.Sp = p.float()
	if !p.lit(`,"P":`) {
		return en, false
	}
	en.P = p.float()
	if !p.lit(`,"Tier":`) {
		return en, false
	}
	en.Tier = uint8(p.uint(8))
	if !p.lit(`}`) || len(p.b) != 0 || p.bad {
		return en, false
	}
	return en, true
}

// entryParser reads json.Marshal's output of numbers and literals; bad
// is set at the first thing it does not expect.
type entryParser struct {
	b   []byte
	bad bool
}

func (p *entryParser) lit(s string) bool {
	if p.bad || !bytes.HasPrefix(p.b, []byte(s)) {
		p.bad = true
		return false
	}
	p.b = p.b[len(s):]
	return true
}

// number cuts the next JSON number token.
func (p *entryParser) number() string {
	n := 0
	for n < len(p.b) && (p.b[n] >= '0' && p.b[n] <= '9' || p.b[n] == '-' || p.b[n] == '+' || p.b[n] == '.' || p.b[n] == 'e' || p.b[n] == 'E') {
		n++
	}
	s := string(p.b[:n])
	p.b = p.b[n:]
	return s
}

func (p *entryParser) uint(bits int) uint64 {
	s := p.number()
	if !jsonNumber(s) {
		p.bad = true
		return 0
	}
	v, err := strconv.ParseUint(s, 10, bits) // fails on a sign, fraction or exponent
	if err != nil {
		p.bad = true
	}
	return v
}

func (p *entryParser) float() float64 {
	s := p.number()
	if !jsonNumber(s) {
		p.bad = true
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		p.bad = true
	}
	return v
}

// jsonNumber reports whether s is a JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func jsonNumber(s string) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
