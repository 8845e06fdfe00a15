package fts

import (
	"unsafe"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/stop"
	index "github.com/blevesearch/bleve_index_api"
)

// termCounter counts the tokens of an ASCII text and the occurrences of
// some terms among them as an analyzer of newAnalyzers (with its stems
// cached) would analyse it, without building the token stream: the
// pooled search needs only the fields' lengths and the query words'
// frequencies of its documents. It walks the words as asciiTokenizer
// finds them and applies the analyzer's token filters to each word in
// place, in their order. A text with a byte beyond ASCII, or a word
// whose stem the cache does not hold, is left to the analyzer (count
// reports false). Safe for concurrent use.
type termCounter struct {
	steps []countStep
}

type countStep struct {
	kind countKind
	stop analysis.TokenMap // stepStop
	stem *stemCache        // stepStem
}

type countKind uint8

const (
	stepPossessive countKind = iota // en.PossessiveFilter: a trailing 's goes
	stepLower                       // lowercase.LowerCaseFilter, on ASCII
	stepStop                        // stop.StopTokensFilter: the word goes
	stepStem                        // stemCache: the cached stem
)

// newTermCounter returns the counter of analyzer a, or nil when a is not
// one it reproduces: a DefaultAnalyzer with no char filters, the ASCII
// fast tokenizer, and only the token filters above.
func newTermCounter(a analysis.Analyzer) *termCounter {
	da, ok := a.(*analysis.DefaultAnalyzer)
	if !ok || len(da.CharFilters) > 0 {
		return nil
	}
	if _, ok := da.Tokenizer.(asciiTokenizer); !ok {
		return nil
	}
	c := &termCounter{}
	for _, f := range da.TokenFilters {
		switch f := f.(type) {
		case *en.PossessiveFilter:
			c.steps = append(c.steps, countStep{kind: stepPossessive})
		case *lowercase.LowerCaseFilter:
			c.steps = append(c.steps, countStep{kind: stepLower})
		case *stop.StopTokensFilter:
			m := stopMap(f)
			if m == nil {
				return nil
			}
			c.steps = append(c.steps, countStep{kind: stepStop, stop: m})
		case *stemCache:
			c.steps = append(c.steps, countStep{kind: stepStem, stem: f})
			if len(c.steps) != len(da.TokenFilters) {
				return nil // count looks stems up last
			}
		default:
			return nil
		}
	}
	return c
}

// stopMap is the token map of a stop filter, whose field is not
// exported: bleve's English stop list, the only one newAnalyzers
// configures. It returns nil when f keeps a word of that list or drops
// one of a few words the list does not hold: f has another list.
func stopMap(f *stop.StopTokensFilter) analysis.TokenMap {
	words := analysis.NewTokenMap()
	if err := words.LoadBytes(en.EnglishStopWords); err != nil {
		return nil
	}
	for w := range words {
		if len(f.Filter(analysis.TokenStream{{Term: []byte(w)}})) != 0 {
			return nil
		}
	}
	for _, w := range []string{"stop", "word", "memory", "a1", "x"} {
		if _, ok := words[w]; !ok && len(f.Filter(analysis.TokenStream{{Term: []byte(w)}})) == 0 {
			return nil
		}
	}
	return words
}

// countWord is where a word the analyzer keeps lies in the copy of a
// text that termCounter.words walks.
type countWord struct{ start, end int }

// words appends to out the bounds in b, a copy of an ASCII text, of the
// words the analyzer keeps, in their order, with every token filter
// before the stems applied (they change b in place and only shorten a
// word). The stems are left to the caller.
func (c *termCounter) words(b []byte, out []countWord) []countWord {
	for i := 0; i < len(b); {
		j, _, _ := wordEnd(b, i)
		if j == i {
			i++
			continue
		}
		w := countWord{i, j}
		i = j
		kept := true
		for _, s := range c.steps {
			t := b[w.start:w.end]
			switch s.kind {
			case stepPossessive:
				if l := len(t); l >= 2 && (t[l-1] == 's' || t[l-1] == 'S') && t[l-2] == '\'' {
					w.end -= 2
				}
			case stepLower:
				for k, ch := range t {
					if ch >= 'A' && ch <= 'Z' {
						t[k] = ch + 'a' - 'A'
					}
				}
			case stepStop:
				if _, stop := s.stop[string(t)]; stop {
					kept = false
				}
			case stepStem:
				// Stems are the caller's.
			}
			if !kept {
				break
			}
		}
		if kept {
			out = append(out, w)
		}
	}
	return out
}

// count counts text's tokens as the analyzer gives them and adds the
// occurrences of each term in at (term -> index) to tf. scratch is a
// buffer it may grow and returns. ok is false, and tf unchanged, when
// the analyzer must analyse text instead.
func (c *termCounter) count(text string, at map[string]int, tf []int32, scratch []byte) (n int, ok bool, _ []byte) {
	if !isASCIIText(text) {
		return 0, false, scratch
	}
	b := append(scratch[:0], text...)
	var wbuf [128]countWord
	words := c.words(b, wbuf[:0])
	stem := c.stemStep()
	if stem == nil {
		for _, w := range words {
			if j, ok := at[string(b[w.start:w.end])]; ok {
				tf[j]++
			}
		}
		return len(words), true, b
	}
	// Every stem first: a miss leaves tf unchanged.
	var jbuf [128]int32
	js := jbuf[:0]
	stem.mu.RLock()
	for _, w := range words {
		s, hit := stem.stems[string(b[w.start:w.end])]
		if !hit {
			stem.mu.RUnlock()
			return 0, false, b
		}
		j, ok := at[s]
		if !ok {
			j = -1
		}
		js = append(js, int32(j))
	}
	stem.mu.RUnlock()
	for _, j := range js {
		if j >= 0 {
			tf[j]++
		}
	}
	return len(words), true, b
}

// freqs is newFieldFreqs of the analyzer's tokens of text for a field
// indexed with opts, made from the words and the cached stems without
// the token stream. scratch is a buffer it may grow and returns. ok is
// false when the analyzer must analyse text instead (a byte beyond ASCII,
// a stem the cache does not hold).
func (c *termCounter) freqs(text string, opts index.FieldIndexingOptions, scratch []byte) (_ fieldFreqs, ok bool, _ []byte) {
	if !isASCIIText(text) {
		return fieldFreqs{}, false, scratch
	}
	b := append(scratch[:0], text...)
	var wbuf [128]countWord
	words := c.words(b, wbuf[:0])
	// The terms, in token order: the words themselves, or their stems.
	var tbuf [128]string
	terms := tbuf[:0]
	if stem := c.stemStep(); stem != nil {
		stem.mu.RLock()
		for _, w := range words {
			s, hit := stem.stems[string(b[w.start:w.end])]
			if !hit {
				stem.mu.RUnlock()
				return fieldFreqs{}, false, b
			}
			terms = append(terms, s)
		}
		stem.mu.RUnlock()
	} else {
		for _, w := range words {
			terms = append(terms, unsafe.String(&b[w.start], w.end-w.start))
		}
	}
	return countFreqs(terms, func(s string) string { return s }, opts), true, b
}

// isASCIIText reports whether text has no byte beyond ASCII.
func isASCIIText(text string) bool {
	for i := range len(text) {
		if text[i] >= 0x80 {
			return false
		}
	}
	return true
}

// stemStep is the counter's stem cache, nil when it has none. The stem
// filter must come last for count's order to be the analyzer's.
func (c *termCounter) stemStep() *stemCache {
	if n := len(c.steps); n > 0 && c.steps[n-1].kind == stepStem {
		return c.steps[n-1].stem
	}
	return nil
}
