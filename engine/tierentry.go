package engine

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/hmo-dev/hmo/tiers"
)

// decodeEntry reads a tier entry of the active bucket, as json.Unmarshal
// reads it. A tiered open reads every entry of Tiers 1 and 2 (4,352 by
// default) and encoding/json's reflection was most of that: the entries
// persistEntry writes (json.Marshal of tiers.Entry: its fields in order,
// no escapes in the session key) are read field by field; anything else
// goes to json.Unmarshal, whose result and errors are the reference.
func decodeEntry(b []byte) (tiers.Entry, error) {
	if en, ok := fastEntry(b); ok {
		return en, nil
	}
	var en tiers.Entry
	err := json.Unmarshal(b, &en)
	return en, err
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
