package entity

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hmo-dev/hmo/retrieve"
)

// Kind is what an entity is.
type Kind uint8

// Kinds of entities.
const (
	// Name is a capitalised span: a person, place, organisation or
	// product ("Melanie", "Charlotte's Web", "LGBTQ").
	Name Kind = 1
	// Date is a day or a month a time expression names, resolved
	// against the record's own date ("yesterday", "May 2023").
	Date Kind = 2
)

// Mention is one entity a text mentions.
type Mention struct {
	// Key is the normalised entity: lower case, possessives removed,
	// words joined by one space; dates read "date:2023-05-07" (a day) or
	// "date:2023-05" (a month).
	Key  string
	Kind Kind
	// Initial is true when every occurrence of a Name in the text starts
	// a sentence, where any word is capitalised: such a mention counts
	// only once the graph has seen the key inside a sentence too.
	Initial bool
}

// MaxKeyBytes bounds a mention's key; longer spans are cut at a word.
const MaxKeyBytes = 64

// maxSpanWords bounds the words of one capitalised span.
const maxSpanWords = 4

// notNames are capitalised words that are not entities wherever they
// stand: the pronoun I and its contractions, interjections and greetings
// that follow a comma, and the calendar words the date extractor reads.
var notNames = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`i i'm i've i'd i'll im ive id ill oh ok okay hey hi hello yes yeah yep no nope wow thanks
		thank please sure great awesome cool nice haha lol omg well so and but or the a an it its that this these those bye goodbye
		my your our his her their we you he she they me him us them what when where who why how which
		mr mrs ms dr st
		monday tuesday wednesday thursday friday saturday sunday
		january february march april may june july august september october november december
		today yesterday tomorrow tonight`) {
		notNames[w] = true
	}
}

// Extract returns the entities text mentions, each key once, in the
// order of first mention: capitalised spans (names of people, places,
// organisations, products) and the days or months its time expressions
// name, resolved against at (the record's date; zero leaves relative
// expressions out). It uses no gazetteer: a capitalised word that starts
// a sentence is marked Initial, because any word is capitalised there.
// It never fails; text without entities gives none.
func Extract(text string, at time.Time) []Mention {
	var out []Mention
	idx := map[string]int{}
	add := func(m Mention) {
		if i, ok := idx[m.Key]; ok {
			out[i].Initial = out[i].Initial && m.Initial
			return
		}
		idx[m.Key] = len(out)
		out = append(out, m)
	}
	for _, s := range clauses(text) {
		ws := retrieve.Words(s.text)
		for i := 0; i < len(ws); i++ {
			if !nameWord(ws[i]) {
				continue
			}
			j := i + 1
			for j < len(ws) && j-i < maxSpanWords && nameWord(ws[j]) {
				j++
			}
			parts := make([]string, 0, j-i)
			for _, w := range ws[i:j] {
				parts = append(parts, w.Lower)
			}
			add(Mention{Key: cutKey(strings.Join(parts, " ")), Kind: Name, Initial: s.start && i == 0 && j-i == 1})
			i = j - 1
		}
	}
	for _, sp := range retrieve.TimeMentions(text, at) {
		if k := dateKey(sp); k != "" {
			add(Mention{Key: k, Kind: Date})
		}
	}
	return out
}

// nameWord reports whether w can be part of a name: capitalised, at
// least two letters, not a stop word.
func nameWord(w retrieve.Word) bool {
	return w.Capital && utf8.RuneCountInString(w.Lower) >= 2 && !notNames[w.Lower] && !strings.ContainsFunc(w.Lower, unicode.IsDigit)
}

type clause struct {
	text  string
	start bool // the clause starts a sentence
}

// clauses splits text at punctuation, so a name span never crosses a
// comma; start marks the clauses that begin a sentence (after '.', '!',
// '?', a colon or a line break, or at the start of text).
func clauses(text string) []clause {
	var out []clause
	begin, sentence := 0, true
	for i, r := range text {
		ends := false
		switch r {
		case '.', '!', '?', '\n', ':', '"', '“', '”':
			ends = true
		case ',', ';', '(', ')', '[', ']', '/':
		default:
			continue
		}
		if s := text[begin:i]; strings.TrimSpace(s) != "" {
			out = append(out, clause{text: s, start: sentence})
			sentence = false
		}
		if ends {
			sentence = true
		}
		begin = i + utf8.RuneLen(r)
	}
	if s := text[begin:]; strings.TrimSpace(s) != "" {
		out = append(out, clause{text: s, start: sentence})
	}
	return out
}

// dateKey names a resolved span of one day or one month; longer or
// unresolved spans name no entity.
func dateKey(s retrieve.Span) string {
	if !s.Resolved() {
		return ""
	}
	d := s.End.Sub(s.Start)
	switch {
	case d <= 24*time.Hour:
		return "date:" + s.Start.Format("2006-01-02")
	case s.Start.Day() == 1 && s.End.Equal(s.Start.AddDate(0, 1, 0)):
		return "date:" + s.Start.Format("2006-01")
	}
	return ""
}

func cutKey(k string) string {
	for len(k) > MaxKeyBytes {
		i := strings.LastIndexByte(k[:MaxKeyBytes], ' ')
		if i <= 0 {
			// one long word: cut at a rune boundary
			i = MaxKeyBytes
			for i > 0 && !utf8.RuneStart(k[i]) {
				i--
			}
		}
		k = k[:i]
	}
	return k
}
