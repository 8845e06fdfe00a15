package retrieve

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Span is a time expression found in text and, when it could be
// resolved against a reference date, the interval it names [Start, End).
type Span struct {
	Text       string // the expression as written, lower-cased
	Start, End time.Time
}

// Resolved reports whether the span names an interval.
func (s Span) Resolved() bool { return !s.Start.IsZero() && s.End.After(s.Start) }

// Contains reports whether t falls inside a resolved span.
func (s Span) Contains(t time.Time) bool {
	return s.Resolved() && !t.Before(s.Start) && t.Before(s.End)
}

// Overlaps reports whether two resolved spans share an instant.
func (s Span) Overlaps(o Span) bool {
	return s.Resolved() && o.Resolved() && s.Start.Before(o.End) && o.Start.Before(s.End)
}

var months = map[string]time.Month{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}

var weekdays = map[string]time.Weekday{
	"sunday": 0, "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6,
}

var units = map[string]string{
	"day": "day", "days": "day", "week": "week", "weeks": "week", "weekend": "weekend", "weekends": "weekend",
	"month": "month", "months": "month", "year": "year", "years": "year", "night": "day", "summer": "season",
	"winter": "season", "spring": "season", "fall": "season", "autumn": "season",
}

var counts = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "few": 3, "couple": 2, "several": 3,
}

// mayStartMention holds the words TimeMentions can start an expression
// with, besides numbers: the words its cases compare the current word
// with, and the keys of the maps they look it up in.
var mayStartMention = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{"yesterday", "today", "tonight", "tomorrow", "last", "next", "this", "past", "ago", "recently", "weekend"} {
		m[w] = true
	}
	for w := range counts {
		m[w] = true
	}
	for w := range months {
		m[w] = true
	}
	for w := range weekdays {
		m[w] = true
	}
	return m
}()

// startShapes[n][f] has bit l set when mayStartMention holds a word of
// n bytes that begins with letter 'a'+f and ends with letter 'a'+l: a
// word of another shape is surely not in it, found without hashing it.
// shapesAll is set when a word of mayStartMention has no such shape
// (none has): every word is then looked up.
var startShapes, shapesAll = func() (t [10][26]uint32, all bool) {
	for w := range mayStartMention {
		n := len(w)
		if n == 0 || n >= len(t) || !isLower(w[0]) || !isLower(w[n-1]) {
			return t, true
		}
		t[n][w[0]-'a'] |= 1 << (w[n-1] - 'a')
	}
	return t, false
}()

// mayStart is mayStartMention[w].
func mayStart(w string) bool {
	if !shapesAll {
		n := len(w)
		if n == 0 || n >= len(startShapes) || !isLower(w[0]) || !isLower(w[n-1]) || startShapes[n][w[0]-'a']&(1<<(w[n-1]-'a')) == 0 {
			return false
		}
	}
	return mayStartMention[w]
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

// skipWords lets TimeMentions pass over the words mayStartMention does
// not hold; tests turn it off to check that the cases take none of them.
var skipWords = true

// IsWhenQuestion reports whether a question asks for a time: "when ...",
// "what year/month/date/day ...", "how long ago ...".
func IsWhenQuestion(q string) bool {
	ws := strings.Fields(strings.ToLower(q))
	for i, w := range ws {
		w = strings.Trim(w, "?,.!\"'")
		switch w {
		case "when":
			return true
		case "what", "which":
			if i+1 < len(ws) {
				switch strings.Trim(ws[i+1], "?,.!") {
				case "year", "month", "date", "day", "time", "week", "weekend":
					return true
				}
			}
		case "long":
			if i+1 < len(ws) && strings.Trim(ws[i+1], "?,.!") == "ago" {
				return true
			}
		}
	}
	return false
}

// TimeMentions finds the time expressions of text: relative ones
// ("yesterday", "last week", "two months ago", "next Friday"), months
// with or without a year ("May 2023", "in May"), years, weekdays and
// dates. Relative expressions and bare months resolve against ref (a
// zero ref leaves them unresolved). It never fails: text without time
// expressions gives none.
func TimeMentions(text string, ref time.Time) []Span {
	buf := timeTokenBufs.Get().(*[]timeToken)
	toks := timeTokens((*buf)[:0], text)
	defer func() {
		clear(toks) // the tokens' strings are the text's, or a copy the spans keep
		if cap(toks) <= maxKeptTokens {
			*buf = toks[:0]
			timeTokenBufs.Put(buf)
		}
	}()
	var out []Span
	for i := 0; i < len(toks); i++ {
		w := toks[i].lower
		if skipWords && !mayStart(w) && !isNumber(w) {
			continue // no case below takes it
		}
		next := func(k int) string {
			if i+k < len(toks) {
				return toks[i+k].lower
			}
			return ""
		}
		switch {
		case w == "yesterday" || w == "today" || w == "tonight" || w == "tomorrow":
			off := 0 // today, tonight
			switch w {
			case "yesterday":
				off = -1
			case "tomorrow":
				off = 1
			}
			if ref.IsZero() {
				out = append(out, Span{Text: w})
			} else {
				out = append(out, relative(w, ref, off, 1, "day"))
			}
		case (w == "last" || w == "next" || w == "this" || w == "past") && (units[next(1)] != "" || weekdayOf(next(1)) >= 0):
			u := next(1)
			txt := w + " " + u
			i++
			if ref.IsZero() {
				out = append(out, Span{Text: txt})
				continue
			}
			dir := 0 // this
			switch w {
			case "last", "past":
				dir = -1
			case "next":
				dir = 1
			}
			out = append(out, relative(txt, ref, dir, 1, u))
		case counts[w] > 0 || isNumber(w):
			// "two weeks ago", "a few days ago", "3 months ago"
			n, k := counts[w], 1
			if isNumber(w) {
				n, _ = strconv.Atoi(w)
			}
			if next(k) == "few" || next(k) == "couple" {
				n = counts[next(k)]
				k++
				if next(k) == "of" {
					k++
				}
			}
			u := units[next(k)]
			if u == "" || next(k+1) != "ago" || n <= 0 || n > 100 {
				if y, ok := yearOf(w); ok {
					out = append(out, Span{Text: w, Start: time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(y+1, 1, 1, 0, 0, 0, 0, time.UTC)})
				}
				continue
			}
			txt, unit := strings.Join(tokenTexts(toks[i:i+k+2]), " "), next(k)
			i += k + 1
			if ref.IsZero() {
				out = append(out, Span{Text: txt})
				continue
			}
			out = append(out, relative(txt, ref, -1, n, unit))
		case months[w] != 0 && (w != "may" || toks[i].capital) && (w != "mar" && w != "jan" || toks[i].capital):
			m := months[w]
			if y, ok := yearOf(next(1)); ok {
				start := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
				out = append(out, Span{Text: w + " " + next(1), Start: start, End: start.AddDate(0, 1, 0)})
				i++
				continue
			}
			if d, err := strconv.Atoi(next(1)); err == nil && d >= 1 && d <= 31 {
				// "May 7", "May 7 2023"
				y, explicit := ref.Year(), false
				txt := w + " " + next(1)
				if yy, ok := yearOf(next(2)); ok {
					y, txt, explicit = yy, txt+" "+next(2), true
					i++
				}
				i++
				if ref.IsZero() && !explicit {
					out = append(out, Span{Text: txt})
					continue
				}
				start := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
				out = append(out, Span{Text: txt, Start: start, End: start.AddDate(0, 0, 1)})
				continue
			}
			if w == "may" && !toks[i].capital {
				continue
			}
			if ref.IsZero() {
				out = append(out, Span{Text: w})
				continue
			}
			start := time.Date(ref.Year(), m, 1, 0, 0, 0, 0, time.UTC)
			out = append(out, Span{Text: w, Start: start, End: start.AddDate(0, 1, 0)})
		case weekdayOf(w) >= 0:
			out = append(out, Span{Text: w})
		case w == "ago" || w == "recently" || w == "weekend":
			out = append(out, Span{Text: w})
		}
	}
	return out
}

// relative resolves "last/next/this UNIT" (n = 1) and "N UNITs ago"
// (dir -1) against ref.
func relative(txt string, ref time.Time, dir, n int, unit string) Span {
	d0 := time.Date(ref.Year(), ref.Month(), ref.Day(), 0, 0, 0, 0, time.UTC)
	if wd := weekdayOf(unit); wd >= 0 {
		// last Friday: the latest Friday before ref; next Friday: the first after.
		diff := int(wd) - int(d0.Weekday())
		switch {
		case dir < 0 && diff >= 0:
			diff -= 7
		case dir > 0 && diff <= 0:
			diff += 7
		}
		s := d0.AddDate(0, 0, diff)
		return Span{Text: txt, Start: s, End: s.AddDate(0, 0, 1)}
	}
	switch units[unit] {
	case "day":
		s := d0.AddDate(0, 0, dir*n)
		return Span{Text: txt, Start: s, End: s.AddDate(0, 0, 1)}
	case "week", "weekend":
		// weeks start on Monday
		wk := d0.AddDate(0, 0, -((int(d0.Weekday()) + 6) % 7))
		s := wk.AddDate(0, 0, 7*dir*n)
		return Span{Text: txt, Start: s, End: s.AddDate(0, 0, 7)}
	case "month":
		m := time.Date(d0.Year(), d0.Month(), 1, 0, 0, 0, 0, time.UTC)
		s := m.AddDate(0, dir*n, 0)
		return Span{Text: txt, Start: s, End: s.AddDate(0, 1, 0)}
	case "year":
		s := time.Date(d0.Year()+dir*n, 1, 1, 0, 0, 0, 0, time.UTC)
		return Span{Text: txt, Start: s, End: s.AddDate(1, 0, 0)}
	case "season":
		// a season is about three months around the same season a year apart or this year
		s := d0.AddDate(0, -6+6*dir, 0)
		if dir == 0 {
			s = d0.AddDate(0, -3, 0)
		}
		return Span{Text: txt, Start: s, End: s.AddDate(0, 6, 0)}
	}
	return Span{Text: txt}
}

func weekdayOf(w string) time.Weekday {
	if d, ok := weekdays[w]; ok {
		return d
	}
	return -1
}

func yearOf(w string) (int, bool) {
	if len(w) != 4 || !isNumber(w) {
		return 0, false
	}
	y, _ := strconv.Atoi(w)
	return y, y >= 1900 && y <= 2100
}

func isNumber(w string) bool {
	if w == "" || len(w) > 6 {
		return false
	}
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

type timeToken struct {
	lower   string
	capital bool
}

// timeTokenBufs holds TimeMentions' token lists for reuse: a question
// reads the time mentions of its candidates' texts, each list dropped
// when the mentions are found.
var timeTokenBufs = sync.Pool{New: func() any { return new([]timeToken) }}

// maxKeptTokens bounds the lists timeTokenBufs keeps (24 bytes a token):
// a longer text's list, with room for half its bytes, is dropped.
const maxKeptTokens = 4096

// timeTokens appends to out the runs of ASCII letters and digits of text
// (every other rune separates), lower-cased, with a number's ordinal
// suffix dropped ("7th" -> "7"), and returns it. It reads text once,
// with room made first in out for as many tokens as the text can hold.
// The tokens are substrings of text until the first token with a
// capital, then of one lower-cased copy of it (lowerASCII: a token is a
// run of ASCII bytes, so this is strings.ToLower of each token, at the
// same offsets): one allocation for the copy, made only when the text
// has a capital, and one for the tokens when out has no room.
func timeTokens(out []timeToken, text string) []timeToken {
	// A text of n bytes has at most (n+1)/2 tokens: with room for
	// them, out grows at most once.
	out = slices.Grow(out, (len(text)+1)/2)
	from, copied := text, false // what the tokens are cut from: text, then its lower-cased copy
	for i := 0; i < len(text); {
		if alnum[text[i]] == 0 {
			i++
			continue
		}
		j := i
		var class uint8 // the classes of the token's bytes, or-ed
		for j < len(text) {
			c := alnum[text[j]]
			if c == 0 {
				break
			}
			class |= c
			j++
		}
		if class&alnumUpper != 0 && !copied {
			// The tokens before this one have no capital: as cut
			// from text, they are as cut from the copy.
			from, copied = lowerASCII(text), true
		}
		w := from[i:j]
		if k := len(w) - 2; k > 0 {
			switch w[k:] {
			case "st", "nd", "rd", "th":
				if isNumber(w[:k]) {
					w = w[:k]
				}
			}
		}
		out = append(out, timeToken{lower: w, capital: text[i] >= 'A' && text[i] <= 'Z'})
		i = j
	}
	return out
}

// lowerASCII is text with its ASCII capitals in lower case and every
// other byte as it is, in one allocation.
func lowerASCII(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	done := 0
	for i := range len(text) {
		if c := text[i]; c >= 'A' && c <= 'Z' {
			b.WriteString(text[done:i])
			b.WriteByte(c + 'a' - 'A')
			done = i + 1
		}
	}
	b.WriteString(text[done:])
	return b.String()
}

// alnum classes a byte: 0 for none of ASCII's letters and digits,
// alnumUpper for a capital, alnumOther for the others.
var alnum = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c >= 'A' && c <= 'Z':
			t[c] = alnumUpper
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			t[c] = alnumOther
		}
	}
	return t
}()

const (
	alnumOther = 1
	alnumUpper = 2
)

func tokenTexts(ts []timeToken) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.lower
	}
	return out
}
