package markdown

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxLineBytes is the longest line Parse accepts.
const MaxLineBytes = 1 << 20

// Sentinel errors.
var (
	ErrSyntax   = errors.New("markdown: not valid UTF-8")
	ErrLineSize = errors.New("markdown: line too long")
)

// Item is one memory found in a Markdown file.
type Item struct {
	Text    string    // the item or paragraph, markers removed
	Heading string    // headings above it, outermost first, joined by " > "
	Scope   string    // from a "scope: NAME" heading; empty if none
	Date    time.Time // from the file name or a date heading; zero if none
	Line    int       // 1-based line where the item starts
}

var (
	headingRe = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	bulletRe  = regexp.MustCompile(`^( {0,3})([-*+]|\d{1,9}[.)])(\s+|$)(.*)$`)
	ruleRe    = regexp.MustCompile(`^ {0,3}(---+|\*\*\*+|___+)\s*$`)
	fenceRe   = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	dateRe    = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})\b`)
	scopeRe   = regexp.MustCompile(`^scope:\s*(.+)$`)
)

// DateFromName returns the date of a daily note named YYYY-MM-DD.md (in
// any directory), or zero.
func DateFromName(name string) time.Time {
	base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	t, err := time.Parse(time.DateOnly, base)
	if err != nil {
		return time.Time{}
	}
	return t
}

// parser holds the state of one Parse.
type parser struct {
	name     string
	headings []string // by level-1
	scope    string
	date     time.Time
	block    []string // lines of the current item or paragraph
	start    int      // its first line
	inItem   bool     // the block is a list item
	blank    bool     // a blank line ended the item's last paragraph
	fence    string   // the open code fence, if any
	comment  bool     // inside a multi-line HTML comment
	items    []Item
}

// Parse reads the items of one Markdown file; name (a path or base name)
// dates a daily note.
func Parse(r io.Reader, name string) ([]Item, error) {
	p := &parser{name: name, date: DateFromName(name)}
	br := bufio.NewReader(r)
	front := false
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err == io.EOF && line == nil {
			break
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if !utf8.Valid(line) {
			return nil, fmt.Errorf("line %d: %w", n, ErrSyntax)
		}
		s := strings.TrimRight(string(line), "\r")
		switch {
		case n == 1 && strings.TrimSpace(s) == "---":
			front = true
		case front:
			front = strings.TrimSpace(s) != "---"
		default:
			p.line(s, n)
		}
	}
	p.flush()
	return p.items, nil
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > MaxLineBytes {
			return nil, ErrLineSize
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF && len(buf) == 0 {
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		return []byte(strings.TrimSuffix(string(buf), "\n")), nil
	}
}

// line handles one line outside front matter.
func (p *parser) line(s string, n int) {
	if p.fence != "" && p.inItem && s != "" && !indented(s) {
		p.flush() // a list item's code block ends with the item
	}
	if p.fence != "" {
		p.block = append(p.block, p.inner(s))
		if strings.HasPrefix(strings.TrimSpace(s), p.fence) {
			p.fence = ""
		}
		return
	}
	if p.skipComment(s) {
		return
	}
	t := strings.TrimSpace(s)
	if t == "" {
		if p.inItem { // a loose item goes on if the next line is indented
			p.blank = true
			p.block = append(p.block, "")
		} else {
			p.flush()
		}
		return
	}
	if p.blank && !indented(s) {
		p.flush()
	}
	p.blank = false
	if m := fenceRe.FindStringSubmatch(s); m != nil {
		if len(p.block) == 0 {
			p.start = n
		}
		p.fence = m[1]
		p.block = append(p.block, p.inner(s))
		return
	}
	if m := headingRe.FindStringSubmatch(s); m != nil {
		p.flush()
		p.heading(len(m[1]), m[2])
		return
	}
	if ruleRe.MatchString(s) {
		p.flush()
		return
	}
	if m := bulletRe.FindStringSubmatch(s); m != nil && len(m[1]) < 2 {
		p.flush()
		p.inItem, p.start = true, n
		p.block = append(p.block, m[4])
		if f := fenceRe.FindStringSubmatch(m[4]); f != nil {
			p.fence = f[1]
		}
		return
	}
	if len(p.block) == 0 {
		p.start = n
	}
	if p.inItem {
		s = dedent(s)
	} else {
		s = t
	}
	p.block = append(p.block, s)
}

// inner is a line of a code block as kept: dedented inside a list item.
func (p *parser) inner(s string) string {
	if p.inItem {
		return dedent(s)
	}
	return s
}

func indented(s string) bool { return strings.HasPrefix(s, "  ") || strings.HasPrefix(s, "\t") }

// skipComment reports whether s is (part of) an HTML comment on its own.
func (p *parser) skipComment(s string) bool {
	t := strings.TrimSpace(s)
	if p.comment {
		p.comment = !strings.Contains(t, "-->")
		return true
	}
	if strings.HasPrefix(t, "<!--") {
		p.comment = !strings.Contains(t, "-->")
		return true
	}
	return false
}

func (p *parser) heading(level int, text string) {
	if len(p.headings) > level-1 {
		p.headings = p.headings[:level-1]
	}
	for len(p.headings) < level-1 {
		p.headings = append(p.headings, "")
	}
	p.headings = append(p.headings, text)
	p.scope, p.date = "", DateFromName(p.name)
	for _, h := range p.headings {
		if m := scopeRe.FindStringSubmatch(h); m != nil {
			p.scope = strings.TrimSpace(m[1])
		}
		if m := dateRe.FindStringSubmatch(h); m != nil {
			if d, err := time.Parse(time.DateOnly, m[1]); err == nil {
				p.date = d
			}
		}
	}
}

// flush ends the current block.
func (p *parser) flush() {
	text := strings.TrimSpace(strings.Join(p.block, "\n"))
	if text != "" {
		var hs []string
		for _, h := range p.headings {
			if h != "" {
				hs = append(hs, h)
			}
		}
		p.items = append(p.items, Item{Text: text, Heading: strings.Join(hs, " > "), Scope: p.scope, Date: p.date, Line: p.start})
	}
	p.block, p.inItem, p.fence, p.blank = nil, false, "", false
}

// dedent removes up to two leading spaces (a list item's continuation
// indent), or one tab.
func dedent(s string) string {
	if strings.HasPrefix(s, "\t") {
		return s[1:]
	}
	for i := 0; i < 2 && strings.HasPrefix(s, " "); i++ {
		s = s[1:]
	}
	return s
}
