package retrieve

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// NameMatcher resolves the people a question names against known
// speakers: a speaker's full name, any word of it ("Melanie" for
// "Melanie Smith"), in any case, or a short form of at least three
// letters, capitalised and not the question's first word, that starts
// one of its words and no other speaker's ("Mel"); possessives
// ("Melanie's", "James'") are removed. Safe for
// concurrent use once built.
type NameMatcher struct {
	speakers []string
	words    [][]string // lower-cased words of each speaker's name
}

// NewNameMatcher returns a matcher over the distinct non-empty speakers.
func NewNameMatcher(speakers []string) *NameMatcher {
	m := &NameMatcher{}
	seen := map[string]bool{}
	raw := map[string]bool{} // candidates' speakers repeat: fold each once
	for _, s := range speakers {
		if raw[s] {
			continue
		}
		raw[s] = true
		k := strings.ToLower(strings.TrimSpace(s))
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		m.speakers = append(m.speakers, s)
		m.words = append(m.words, nameWords(k))
	}
	return m
}

// Named returns the indexes of the speakers the text names, in the order
// of the speakers given to NewNameMatcher.
func (m *NameMatcher) Named(text string) []int { return m.named(questionWords(text)) }

// named is Named of a text's questionWords.
func (m *NameMatcher) named(toks []qword) []int {
	var out []int
	for i, words := range m.words {
		if m.names(i, words, toks) {
			out = append(out, i)
		}
	}
	return out
}

// Speaker returns the speaker at index i.
func (m *NameMatcher) Speaker(i int) string { return m.speakers[i] }

func (m *NameMatcher) names(i int, words []string, toks []qword) bool {
	for k, t := range toks {
		for _, w := range words {
			if t.lower == w {
				return true
			}
			if k > 0 && t.capital && len(t.lower) >= 3 && len(t.lower) < len(w) && strings.HasPrefix(w, t.lower) && m.uniquePrefix(i, t.lower) {
				return true
			}
		}
	}
	return false
}

// uniquePrefix reports whether p starts a word of speaker i's name only.
func (m *NameMatcher) uniquePrefix(i int, p string) bool {
	for j, words := range m.words {
		if j == i {
			continue
		}
		for _, w := range words {
			if strings.HasPrefix(w, p) {
				return false
			}
		}
	}
	return true
}

type qword struct {
	lower   string
	capital bool
}

// questionWords splits text into words of letters, digits, apostrophes
// and hyphens, possessives removed.
func questionWords(text string) []qword {
	var out []qword
	for f := range strings.FieldsFuncSeq(text, notWordRune) {
		f = strings.Trim(f, "'’-")
		lower := strings.ToLower(f)
		for _, suf := range possessives {
			if strings.HasSuffix(lower, suf) {
				f = f[:len(f)-len(suf)]
				lower = strings.ToLower(f)
				break
			}
		}
		if f == "" {
			continue
		}
		r, _ := utf8.DecodeRuneInString(f)
		out = append(out, qword{lower: lower, capital: unicode.IsUpper(r)})
	}
	return out
}

// possessives are the endings questionWords removes, the first that the
// lower-cased word ends with.
var possessives = [...]string{"'s", "’s", "'", "’"}

// notWordRune reports whether r separates words.
func notWordRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’' && r != '-'
}

func nameWords(lower string) []string {
	ws := strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '-' })
	if len(ws) > 1 {
		ws = append(ws, lower)
	}
	return ws
}

// Word is one word of a text as NameMatcher reads it: lower-cased, the
// possessive removed, and whether it was written with a capital.
type Word struct {
	Lower   string
	Capital bool
}

// Words splits text into words as NameMatcher reads names: letters,
// digits, apostrophes and hyphens, possessives ("Melanie's", "James'")
// removed. Structures that extract names (the entity graph) read text
// the same way the question side does.
func Words(text string) []Word {
	qs := questionWords(text)
	out := make([]Word, len(qs))
	for i, q := range qs {
		out[i] = Word{Lower: q.lower, Capital: q.capital}
	}
	return out
}
