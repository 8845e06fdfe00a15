package fts

import (
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
)

// asciiTokenizer is bleve's unicode tokenizer (Unicode 8.0 word
// boundaries, UAX #29, as github.com/blevesearch/segment implements
// them) with a fast path for pure ASCII input, which is most of what an
// agent's memory holds: it gives the same tokens (term, start, end,
// position and type) without the general segmenter, which costs most of
// an analysis. Other input goes to the unicode tokenizer. Safe for
// concurrent use.
//
// In ASCII the word boundary rules come down to: letters, digits and the
// low line ('_', ExtendNumLet) join; a full stop or apostrophe (MidNumLet,
// Single_Quote) joins two letters or two digits, a colon (MidLetter) two
// letters, a comma or semicolon (MidNum) two digits; every other byte is
// a segment of its own that the tokenizer drops. A token with a digit and
// no letter is Numeric, any other AlphaNumeric.
type asciiTokenizer struct {
	inner analysis.Tokenizer
}

// ASCII word-break classes.
const (
	wbOther = iota
	wbLetter
	wbDigit
	wbExtend    // '_'
	wbMidLetter // ':'
	wbMidNum    // ',' ';'
	wbMidBoth   // '.' '\''
)

var wbClass = func() (t [128]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = wbLetter, wbLetter
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = wbDigit
	}
	t['_'] = wbExtend
	t[':'] = wbMidLetter
	t[','], t[';'] = wbMidNum, wbMidNum
	t['.'], t['\''] = wbMidBoth, wbMidBoth
	return t
}()

// fastTokens replaces the unicode tokenizer of a (an analyzer built by
// newAnalyzers) with asciiTokenizer; other analyzers are returned as
// they are.
func fastTokens(a analysis.Analyzer) analysis.Analyzer {
	da, ok := a.(*analysis.DefaultAnalyzer)
	if !ok {
		return a
	}
	if _, ok := da.Tokenizer.(*unicode.UnicodeTokenizer); !ok {
		return a
	}
	out := *da
	out.Tokenizer = asciiTokenizer{inner: da.Tokenizer}
	return &out
}

func (t asciiTokenizer) Tokenize(input []byte) analysis.TokenStream {
	for _, c := range input {
		if c >= 0x80 {
			return t.inner.Tokenize(input)
		}
	}
	// The words' bounds and types first, so that the tokens take one
	// allocation.
	type word struct {
		start, end int
		typ        analysis.TokenType
	}
	var buf [64]word
	words := buf[:0]
	for i := 0; i < len(input); {
		j, letter, digit := wordEnd(input, i)
		if j == i {
			i++
			continue
		}
		typ := analysis.AlphaNumeric
		if digit && !letter {
			typ = analysis.Numeric
		}
		words = append(words, word{i, j, typ})
		i = j
	}
	toks := make([]analysis.Token, len(words))
	out := make(analysis.TokenStream, len(words))
	for k, w := range words {
		toks[k] = analysis.Token{Term: input[w.start:w.end], Start: w.start, End: w.end, Position: k + 1, Type: w.typ}
		out[k] = &toks[k]
	}
	return out
}

// wordEnd returns the end of the word that starts at input[i], or i when
// none does, and whether the word holds a letter and a digit. input is
// ASCII.
func wordEnd(input []byte, i int) (end int, letter, digit bool) {
	j := i
	for j < len(input) {
		switch wbClass[input[j]] {
		case wbLetter:
			letter = true
			j++
			continue
		case wbDigit:
			digit = true
			j++
			continue
		case wbExtend:
			j++
			continue
		case wbMidLetter, wbMidNum, wbMidBoth:
			// The character after a joining one is a letter or a
			// digit, counted on the next turn.
			if j > i && j+1 < len(input) && joins(input[j], input[j-1], input[j+1]) {
				j++
				continue
			}
		}
		break
	}
	return j, letter, digit
}

// joins reports whether the middle character m joins prev and next into
// one word.
func joins(m, prev, next byte) bool {
	p, n := wbClass[prev], wbClass[next]
	if p != n {
		return false
	}
	switch wbClass[m] {
	case wbMidLetter:
		return p == wbLetter
	case wbMidNum:
		return p == wbDigit
	default: // wbMidBoth
		return p == wbLetter || p == wbDigit
	}
}
