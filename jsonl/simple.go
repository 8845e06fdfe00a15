package jsonl

// parseSimple decodes the common shape of a line without encoding/json:
// one object whose members are Line's, each named exactly as its tag and
// at most once, with string values (an array of strings for sources)
// holding no escape, and nothing after the object but white space. It
// reports false for anything else, which parseJSON then decodes (or
// refuses) as before; what it accepts, encoding/json decodes to the same
// Line. line is valid UTF-8.
func parseSimple(line []byte) (Line, bool) {
	var l Line
	p := simpleParser{b: line}
	if !p.skip('{') {
		return Line{}, false
	}
	var seen [7]bool
	if !p.skip('}') {
		for {
			name, ok := p.str()
			if !ok || !p.skip(':') {
				return Line{}, false
			}
			f := member(name)
			if f < 0 || seen[f] {
				return Line{}, false
			}
			seen[f] = true
			if f == memberSources {
				if l.Sources, ok = p.strs(); !ok {
					return Line{}, false
				}
			} else {
				v, ok := p.str()
				if !ok {
					return Line{}, false
				}
				*l.field(f) = string(v)
			}
			if p.skip('}') {
				break
			}
			if !p.skip(',') {
				return Line{}, false
			}
		}
	}
	p.space()
	return l, p.i == len(p.b)
}

// The members of Line, in the order of its fields.
const (
	memberScope = iota
	memberSession
	memberTime
	memberRole
	memberSpeaker
	memberText
	memberSources
)

// member is the member a name is, or -1: only the exact names of Line's
// tags (encoding/json would also take them in other cases).
func member(name []byte) int {
	switch string(name) {
	case "scope":
		return memberScope
	case "session":
		return memberSession
	case "time":
		return memberTime
	case "role":
		return memberRole
	case "speaker":
		return memberSpeaker
	case "text":
		return memberText
	case "sources":
		return memberSources
	}
	return -1
}

// field is the string field of member f (not sources).
func (l *Line) field(f int) *string {
	switch f {
	case memberScope:
		return &l.Scope
	case memberSession:
		return &l.Session
	case memberTime:
		return &l.Time
	case memberRole:
		return &l.Role
	case memberSpeaker:
		return &l.Speaker
	}
	return &l.Text
}

// simpleParser reads b from i.
type simpleParser struct {
	b []byte
	i int
}

// space skips JSON white space.
func (p *simpleParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// skip skips white space and then c, reporting whether c was there.
func (p *simpleParser) skip(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string with no escape and no control character (which
// JSON does not allow unescaped), after white space, and returns its
// bytes.
func (p *simpleParser) str() ([]byte, bool) {
	if !p.skip('"') {
		return nil, false
	}
	for j := p.i; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			s := p.b[p.i:j]
			p.i = j + 1
			return s, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// strs reads an array of such strings; [] is an empty, non-nil slice, as
// encoding/json makes it.
func (p *simpleParser) strs() ([]string, bool) {
	if !p.skip('[') {
		return nil, false
	}
	out := []string{}
	if p.skip(']') {
		return out, true
	}
	for {
		v, ok := p.str()
		if !ok {
			return nil, false
		}
		out = append(out, string(v))
		if p.skip(']') {
			return out, true
		}
		if !p.skip(',') {
			return nil, false
		}
	}
}
