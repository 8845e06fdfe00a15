package heuristic

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hmo-dev/hmo/localllm/internal/textcut"
)

// The heuristic scorer has its own small lexer: it needs what the
// embedder's tokenizer throws away (case, sentence boundaries, question
// marks, commas) and no word table.

// hToken is one word of a text, as the heuristic scorer sees it.
type hToken struct {
	word    string // lowercase; contractions split ("can't" → "can", "not")
	capital bool   // written with an upper-case first letter
	allCaps bool   // two or more letters, all upper case ("LGBTQ")
	numeric bool   // holds a digit
	first   bool   // first token of its sentence
	comma   bool   // a comma, semicolon or colon comes just before it
}

// hSentence is one sentence: a run of tokens closed by '.', '!', '?', '…',
// a line break or the end of the text.
type hSentence struct {
	start, end int // byte span in the text, terminator included
	tok0, tok1 int // token range [tok0, tok1)
	question   bool
}

// abbreviations end with a period that does not close a sentence.
var abbreviations = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "st": true,
	"jr": true, "sr": true, "vs": true, "etc": true, "eg": true, "ie": true,
	"approx": true, "inc": true, "ltd": true, "co": true, "mt": true,
}

// hLexer splits a text into tokens and sentences. It is not safe for
// concurrent use; each call of the scorer makes its own.
type hLexer struct {
	text    string
	lower   string // text lowercased when that keeps every byte offset, else ""
	tokens  []hToken
	sents   []hSentence
	cur     hSentence // the sentence being read
	open    bool      // cur has begun
	comma   bool      // a comma was seen since the last token
	lastRaw string    // the previous token as written
}

// lex tokenises text. Invalid UTF-8 bytes separate tokens.
func lex(text string) *hLexer {
	lx := &hLexer{
		text:   text,
		tokens: make([]hToken, 0, len(text)/5+1),
		sents:  make([]hSentence, 0, len(text)/50+1),
	}
	if isASCIIText(text) {
		lx.lower = strings.ToLower(text) // one allocation for all tokens
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			i++
		case textcut.IsWordRune(r):
			i = lx.word(i)
		case r == '.' && lx.abbreviation(i):
			i += size
		case r == '.' || r == '!' || r == '?' || r == '…' || r == '\n':
			i = lx.terminate(i)
		case r == ',' || r == ';' || r == ':':
			lx.comma = true
			i += size
		default:
			if !unicode.IsSpace(r) {
				lx.begin(i)
			}
			i += size
		}
	}
	lx.close(len(text))
	return lx
}

// begin starts a sentence at byte i unless one is open.
func (lx *hLexer) begin(i int) {
	if lx.open {
		return
	}
	lx.open = true
	lx.cur = hSentence{start: i, tok0: len(lx.tokens)}
}

// abbreviation reports whether the period at byte i does not end a
// sentence: a word rune follows at once ("e.g.", "example.com"), or it
// follows a known abbreviation or a single letter (an initial, "e.g.").
func (lx *hLexer) abbreviation(i int) bool {
	if next, _ := utf8.DecodeRuneInString(lx.text[i+1:]); textcut.IsWordRune(next) {
		return true
	}
	if i == 0 || !textcut.IsWordRune(lastRune(lx.text[:i])) || lx.lastRaw == "" {
		return false
	}
	raw := lx.lastRaw
	if utf8.RuneCountInString(raw) == 1 {
		return unicode.IsLetter(lastRune(raw))
	}
	return abbreviations[strings.ToLower(raw)]
}

// terminate reads the run of terminators starting at byte i (".", "?!",
// "...", closing quotes and brackets after them) and closes the sentence.
func (lx *hLexer) terminate(i int) int {
	question := false
	for i < len(lx.text) {
		r, size := utf8.DecodeRuneInString(lx.text[i:])
		if r == '?' {
			question = true
		}
		if !strings.ContainsRune(".!?…\n\"')]}”’»", r) {
			break
		}
		i += size
	}
	if lx.open {
		lx.cur.question = question
	}
	lx.close(i)
	return i
}

// close ends the open sentence at byte end; a sentence without tokens is
// dropped.
func (lx *hLexer) close(end int) {
	if lx.open && len(lx.tokens) > lx.cur.tok0 {
		lx.cur.end = end
		lx.cur.tok1 = len(lx.tokens)
		lx.sents = append(lx.sents, lx.cur)
	}
	lx.open = false
	lx.comma = false
}

// word reads the token starting at byte i and returns the offset after
// it. Letters and digits run together; an apostrophe between two letters
// joins them, and '.', ',' or ':' between two digits ("3.5", "10:30").
func (lx *hLexer) word(i int) int {
	lx.begin(i)
	start := i
	for i < len(lx.text) {
		r, size := utf8.DecodeRuneInString(lx.text[i:])
		if textcut.IsWordRune(r) {
			i += size
			continue
		}
		next, nsize := utf8.DecodeRuneInString(lx.text[i+size:])
		prev := lastRune(lx.text[start:i])
		switch {
		case textcut.IsApostrophe(r) && unicode.IsLetter(prev) && unicode.IsLetter(next):
		case (r == '.' || r == ',' || r == ':') && isDigit(prev) && isDigit(next):
		default:
			lx.emit(start, i)
			return i
		}
		i += size + nsize
	}
	lx.emit(start, i)
	return i
}

// emit appends the tokens of the word text[start:end], splitting
// contractions.
func (lx *hLexer) emit(start, end int) {
	raw := lx.text[start:end]
	lx.lastRaw = raw
	t := hToken{
		first: len(lx.tokens) == lx.cur.tok0,
		comma: lx.comma,
	}
	lx.comma = false
	letters, upper := 0, 0
	for j, r := range raw {
		switch {
		case unicode.IsLetter(r):
			letters++
			if unicode.IsUpper(r) {
				upper++
				t.capital = t.capital || j == 0
			}
		case isDigit(r):
			t.numeric = true
		}
	}
	t.allCaps = letters >= 2 && upper == letters
	low := lx.lower
	if low != "" {
		low = low[start:end]
	} else {
		low = strings.ToLower(raw)
	}
	stem, clitic, ok := cutClitic(low)
	if !ok {
		t.word = low
		lx.tokens = append(lx.tokens, t)
		return
	}
	t.word = stem
	lx.tokens = append(lx.tokens, t)
	if clitic != "" {
		lx.tokens = append(lx.tokens, hToken{word: clitic})
	}
}

// cutClitic splits a lowercase contraction into its stem and the word its
// clitic stands for: "can't" → "can", "not"; "i'm" → "i", "am"; "sister's"
// → "sister", "". Other words with apostrophes lose them ("o'clock" →
// "oclock"). ok is false for a word without an apostrophe.
func cutClitic(w string) (stem, clitic string, ok bool) {
	j := -1
	for i := 0; i < len(w); i++ {
		if w[i] == '\'' || w[i] >= utf8.RuneSelf {
			j = strings.LastIndexFunc(w, textcut.IsApostrophe)
			break
		}
	}
	if j < 0 {
		return w, "", false
	}
	_, size := utf8.DecodeRuneInString(w[j:])
	stem, tail := w[:j], w[j+size:]
	switch {
	case tail == "t" && strings.HasSuffix(stem, "n"):
		base := stem[:len(stem)-1]
		switch base {
		case "ca":
			base = "can"
		case "wo":
			base = "will"
		case "sha":
			base = "shall"
		case "ai":
			base = "is"
		}
		return base, "not", true
	case tail == "s":
		return stem, "", true
	}
	if c, known := hClitics[tail]; known {
		return stem, c, true
	}
	return strings.Map(func(r rune) rune {
		if textcut.IsApostrophe(r) {
			return -1
		}
		return r
	}, w), "", true
}

// hClitics maps a clitic to the word it stands for.
var hClitics = map[string]string{"re": "are", "ll": "will", "m": "am", "ve": "have", "d": "would"}

func isDigit(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.IsDigit(r)
}

func isASCIIText(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lastRune returns the last rune of s, or utf8.RuneError.
func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}
