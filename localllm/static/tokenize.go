package static

import (
	"bytes"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxTokenBytes bounds the length of a token that is looked up; longer runs
// of letters are unknown tokens. The longest word in the table is 42 bytes.
const maxTokenBytes = 64

// cliticWords maps the clitics that the GloVe (Stanford PTB) tokenisation
// splits off ("'re", "'ll", ...) to the words they stand for; the table
// holds no clitic tokens. "'s" (possessive or "is"/"has") is dropped.
var cliticWords = map[string]string{
	"re": "are",
	"ll": "will",
	"m":  "am",
	"ve": "have",
	"d":  "would",
}

// negatedStems maps the stems that PTB tokenisation leaves before "n't"
// when they are not words by themselves ("ca" of "can't").
var negatedStems = map[string]string{
	"ca":  "can",
	"wo":  "will",
	"sha": "shall",
	"ai":  "is",
}

// scanner splits text into tokens and resolves them against a table. It is
// not safe for concurrent use; Static keeps one per call.
type scanner struct {
	tab   *wordTable
	limit int // ids at or above limit are unknown
	buf   []byte
}

// emitFunc receives one token: the word id, or -1 and the token text for a
// word not in the table. tok is only valid during the call.
type emitFunc func(id int, tok []byte)

// scan tokenises text: Unicode compatibility decomposition with the
// combining marks removed ("café" → "cafe"), lowercase, tokens are maximal
// runs of letters and digits, joined by a hyphen or an apostrophe that
// sits between two of them. Everything else separates tokens.
func (sc *scanner) scan(text string, emit emitFunc) {
	if !isASCII(text) {
		text = norm.NFKD.String(text)
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += size
			continue
		}
		sc.buf = sc.buf[:0]
		i = sc.token(text, i)
		sc.word(sc.buf, emit)
	}
}

// token appends the token starting at text[i] to sc.buf, lowercased, and
// returns the offset after it.
func (sc *scanner) token(text string, i int) int {
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isWordRune(r):
			sc.buf = utf8.AppendRune(sc.buf, unicode.ToLower(r))
		case unicode.Is(unicode.Mn, r):
			// a combining mark of a decomposed letter: dropped
		case (r == '-' || isApostrophe(r)) && joins(sc.buf, text[i+size:]):
			if r == '-' {
				sc.buf = append(sc.buf, '-')
			} else {
				sc.buf = append(sc.buf, '\'')
			}
		default:
			return i
		}
		i += size
	}
	return i
}

// joins reports whether a hyphen or apostrophe continues the token: it
// follows a letter or digit and one comes next.
func joins(tok []byte, rest string) bool {
	if len(tok) == 0 || tok[len(tok)-1] == '-' || tok[len(tok)-1] == '\'' {
		return false
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return isWordRune(r)
}

// word resolves one token. Contractions are split the way GloVe's
// tokenisation splits them, with the clitic mapped to its word ("don't" →
// "do not", "we're" → "we are"). A hyphenated token is one word when the
// table has it ("well-known"), otherwise its parts.
func (sc *scanner) word(tok []byte, emit emitFunc) {
	if len(tok) > maxTokenBytes {
		emit(-1, tok)
		return
	}
	j := bytes.LastIndexByte(tok, '\'')
	if j < 0 {
		sc.compound(tok, emit)
		return
	}
	stem, clitic := tok[:j], tok[j+1:]
	switch {
	case string(clitic) == "t" && len(stem) > 1 && stem[len(stem)-1] == 'n':
		base := stem[:len(stem)-1]
		if w, ok := negatedStems[string(base)]; ok {
			base = []byte(w)
		}
		sc.word(base, emit)
		sc.emitWord("not", emit)
	case string(clitic) == "s":
		sc.word(stem, emit)
	case cliticWords[string(clitic)] != "":
		sc.word(stem, emit)
		sc.emitWord(cliticWords[string(clitic)], emit)
	default:
		sc.elided(tok, emit)
	}
}

// elided resolves a token with an apostrophe that is not a contraction
// ("o'clock", "rock'n'roll"): the word without apostrophes when the table
// has it, otherwise the parts between them.
func (sc *scanner) elided(tok []byte, emit emitFunc) {
	joined := bytes.ReplaceAll(tok, []byte("'"), nil)
	if id := sc.lookup(joined); id >= 0 {
		sc.emit(id, joined, emit)
		return
	}
	for part := range bytes.SplitSeq(tok, []byte("'")) {
		sc.compound(part, emit)
	}
}

// compound resolves a token without apostrophes.
func (sc *scanner) compound(tok []byte, emit emitFunc) {
	id := sc.lookup(tok)
	if id >= 0 || bytes.IndexByte(tok, '-') < 0 {
		sc.emit(id, tok, emit)
		return
	}
	for part := range bytes.SplitSeq(tok, []byte("-")) {
		sc.emit(sc.lookup(part), part, emit)
	}
}

// emit passes on a resolved token. Tokens of one character are dropped:
// the table has none (its source left out single letters and digits), and
// as unknown words "i", "a" and initials would weigh like rare words.
func (sc *scanner) emit(id int, tok []byte, emit emitFunc) {
	if id < 0 && utf8.RuneCount(tok) <= 1 {
		return
	}
	emit(id, tok)
}

func (sc *scanner) emitWord(w string, emit emitFunc) {
	b := []byte(w)
	sc.emit(sc.lookup(b), b, emit)
}

// lookup returns the id of tok within the vocabulary limit, or -1.
func (sc *scanner) lookup(tok []byte) int {
	if id := sc.tab.lookup(tok); id < sc.limit {
		return id
	}
	return -1
}

// isWordRune reports whether r is part of a token: a letter or a decimal
// digit.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// isApostrophe reports whether r is written as an apostrophe: ASCII, the
// typographic right and left single quotes, the modifier letter.
func isApostrophe(r rune) bool {
	return r == '\'' || r == '\u2019' || r == '\u2018' || r == '\u02bc'
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
