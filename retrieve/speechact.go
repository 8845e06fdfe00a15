package retrieve

import (
	"encoding/binary"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultSpeechActWeight is the share of its score a question loses
// (PriorOptions.SpeechAct): a question stays searchable but ranks below a
// statement that matches as well.
const DefaultSpeechActWeight = 0.5

// DefaultContextWeight is the share of its score a record that matched
// only through its context loses (PriorOptions.Context).
const DefaultContextWeight = 0.5

// speechActPrior ranks questions below the statements that answer them.
// A record is indexed with the turn before it, so a follow-up question
// ("Big change. Is the team happy with it?") matches everything its
// previous turn says, and a question matches the words of the statement
// that answers it. Each question loses the share w of its score; when the
// query's terms are not in the question's own text, its match came from
// the turn before it, which gets the question's score if it had less (it
// is added as a candidate if it was not one). Questions are told apart by
// IsQuestion on the record's own text.
func speechActPrior(q *Query, cands []Candidate, src Source, w float64) ([]Candidate, error) {
	terms := q.contentTerms()
	return creditContext(cands, src, w, func(d *Doc) (demote, lift bool) {
		if !d.isQuestion() {
			return false, false
		}
		return true, d.ownCoverage(terms) < 0.5
	})
}

// contextPrior credits the turn a match came from. A record whose own
// text holds none of the query's terms matched through the turn before
// it (indexed with it): it loses the share w of its score, and that turn
// gets its score if it had less. Statements that hold the query's terms
// thus rank above the replies that merely follow them.
func contextPrior(q *Query, cands []Candidate, src Source, w float64) ([]Candidate, error) {
	terms := q.contentTerms()
	if len(terms.terms) == 0 {
		return cands, nil
	}
	return creditContext(cands, src, w, func(d *Doc) (demote, lift bool) {
		off := d.ownCoverage(terms) == 0
		return off, off
	})
}

// creditContext applies a prior that demotes some candidates by the
// share w and lifts the turn before some of them to their score (before
// the demotion). A lifted turn that was no candidate becomes one; a
// lifted turn is never itself demoted-and-lifted twice, and questions are
// not lifted.
func creditContext(cands []Candidate, src Source, w float64, judge func(*Doc) (demote, lift bool)) ([]Candidate, error) {
	idx := takePlaces(len(cands))
	defer dropPlaces(idx)
	for i := range cands {
		idx.put(cands[i].ID, i)
	}
	lift := map[uint64]float64{} // previous turn -> score it inherits
	for i := range cands {
		d := cands[i].doc
		if d == nil {
			continue
		}
		demote, up := judge(d)
		if up && d.Prev != 0 {
			lift[d.Prev] = max(lift[d.Prev], cands[i].Score)
		}
		if demote {
			cands[i].Score *= 1 - w
		}
	}
	var missing []uint64
	for id := range lift {
		if _, ok := idx.get(id); !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		docs, err := src.Docs(missing)
		if err != nil {
			return nil, err
		}
		// Room for them at once, when fusion left too little.
		cands = slices.Grow(cands, len(docs))
		for i, d := range docs {
			if d.ID != missing[i] {
				continue // gone, or not served by this source
			}
			d := d
			idx.put(d.ID, len(cands))
			cands = append(cands, Candidate{ID: d.ID, doc: &d})
		}
	}
	for id, s := range lift {
		i, ok := idx.get(id)
		if !ok {
			continue
		}
		if d := cands[i].doc; d != nil && !d.isQuestion() && cands[i].Score < s {
			cands[i].Score = s
		}
	}
	return cands, nil
}

// IsQuestion reports whether a text is mainly a question: the words of
// its sentences that end with a question mark outnumber the words of the
// others.
func IsQuestion(text string) bool {
	if strings.IndexByte(text, '?') < 0 {
		return false // no question's words to outnumber the others
	}
	var qw, sw int
	start := 0
	for i, r := range text {
		if r != '?' && r != '.' && r != '!' && r != '\n' {
			continue
		}
		n := countFields(text[start:i])
		if r == '?' {
			qw += n
		} else {
			sw += n
		}
		start = i + 1
	}
	sw += countFields(text[start:])
	return qw > 0 && qw >= sw
}

// countFields is len(strings.Fields(s)), without the slice.
func countFields(s string) int {
	n, in := 0, false
	for _, r := range s {
		space := unicode.IsSpace(r)
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}

// ContentTerms are the words of a text that carry meaning: lower case,
// without stop words, each cut to its first stemRunes runes.
func ContentTerms(text string) []string {
	var out []string
	seen := map[string]bool{}
	eachTerm(text, func(w string) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	})
	return out
}

// eachTerm calls fn with each content term of text, in order, repeats
// included.
func eachTerm(text string, fn func(string)) {
	eachWord(text, func(word string) {
		if w := strings.ToLower(word); len(w) >= 2 && !functionWords[w] {
			fn(stem(w))
		}
	})
}

// eachWord calls fn with each run of letters and digits of text, in
// order, as it stands in text.
func eachWord(text string, fn func(string)) {
	start := -1
	for i := 0; i < len(text); {
		var in bool
		if c := text[i]; c < utf8.RuneSelf {
			in = asciiWordByte[c] // a letter or digit, by a table
			i++
		} else {
			// As range decodes it: an invalid byte is RuneError, one byte
			// long, neither letter nor digit.
			r, n := utf8.DecodeRuneInString(text[i:])
			in = unicode.IsLetter(r) || unicode.IsDigit(r)
			if in && start < 0 {
				start = i
			}
			if !in && start >= 0 {
				fn(text[start:i])
				start = -1
			}
			i += n
			continue
		}
		if in {
			if start < 0 {
				start = i - 1
			}
			continue
		}
		if start >= 0 {
			fn(text[start : i-1])
			start = -1
		}
	}
	if start >= 0 {
		fn(text[start:])
	}
}

// asciiWordByte says which ASCII bytes are letters or digits
// (unicode.IsLetter or unicode.IsDigit), for eachWord.
var asciiWordByte [utf8.RuneSelf]bool

func init() {
	for c := range asciiWordByte {
		asciiWordByte[c] = unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))
	}
}

// stemRunes is how much of a word ContentTerms keeps: a crude stemmer that
// makes "allergy" and "allergic", "deploy" and "deployed" one term.
const stemRunes = 5

func stem(w string) string {
	if len(w) >= 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		w = w[:len(w)-1] // plural
	}
	n := 0
	for i := range w {
		if n == stemRunes {
			return w[:i]
		}
		n++
	}
	return w
}

// OwnCoverage is the share of terms (ContentTerms of a query) that a
// record's own text holds, in [0, 1]; 0 when there are no terms.
func OwnCoverage(terms []string, text string) float64 {
	if len(terms) == 0 {
		return 0
	}
	var found uint64 // bit i: terms[i] seen (the first 64 terms count)
	eachTerm(text, func(w string) {
		found |= termBits(terms, w)
	})
	return share(found, len(terms))
}

// termSet is a query's content terms with the termKey of the first 64
// (0, which matches no key, for a term without one): the coverage of
// every candidate reads the keys worked out once.
type termSet struct {
	terms []string
	want  []uint64
	// sig has the bit keyBit of each of want: a key whose bit is clear
	// is none of them, and is not compared with each.
	sig uint64
}

func newTermSet(terms []string) *termSet {
	ts := &termSet{terms: terms, want: make([]uint64, min(len(terms), 64))}
	for i := range ts.want {
		ts.want[i] = termKey(terms[i])
		ts.sig |= keyBit(ts.want[i])
	}
	return ts
}

// keyBit is one of 64 bits, chosen by a multiplicative hash of key.
func keyBit(key uint64) uint64 {
	return 1 << ((key * 0x9E3779B97F4A7C15) >> 58)
}

// coverage is OwnCoverage of ts's terms in a text whose content terms
// have the termKeys keys, none of them 0.
func (ts *termSet) coverage(keys []uint64) float64 {
	if len(ts.terms) == 0 {
		return 0
	}
	var found uint64
	for _, k := range keys {
		if ts.sig&keyBit(k) == 0 {
			continue
		}
		for i, w := range ts.want {
			if w == k {
				found |= 1 << i
			}
		}
	}
	return share(found, len(ts.terms))
}

// termKey packs a term of 1 to 7 bytes and its length into a number,
// distinct for distinct terms; 0 for any other term. Stems are at most
// stemRunes runes, so nearly all fit and compare as one integer.
func termKey(t string) uint64 {
	if len(t) == 0 || len(t) > 7 {
		return 0
	}
	k := uint64(len(t)) << 56
	for i := 0; i < len(t); i++ {
		k |= uint64(t[i]) << (8 * i)
	}
	return k
}

// termKeyBytes is termKey of string(t).
func termKeyBytes(t []byte) uint64 {
	if len(t) == 0 || len(t) > 7 {
		return 0
	}
	k := uint64(len(t)) << 56
	for i := range t {
		k |= uint64(t[i]) << (8 * i)
	}
	return k
}

// termBits has bit i set where terms[i] is w (the first 64 terms count).
func termBits(terms []string, w string) uint64 {
	var b uint64
	for i, t := range terms {
		if i < 64 && t == w {
			b |= 1 << i
		}
	}
	return b
}

// share is the number of bits set in found over n.
func share(found uint64, n int) float64 {
	c := 0
	for ; found != 0; found &= found - 1 {
		c++
	}
	return float64(c) / float64(n)
}

// functionWords are English function words and question words.
var functionWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but if then else of to in on at by for with from into onto about
		as is am are was were be been being do does did done doing have has had having will would shall should can could
		may might must i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
		this that these those there here what which who whom whose when where why how not no nor so too very just also
		than such some any each every all both few more most other own same only s t don doesn didn isn aren wasn weren
		let lets ok yes yeah please up down out over under again further once`) {
		functionWords[w] = true
		if k := termKeyBytes([]byte(w)); k != 0 {
			functionKeys[k] = true
		} else {
			longFunctionWords = true // looked up in the map
		}
	}
}

// functionKeys are the termKeyBytes of the function words, for a lookup
// of a lower-cased ASCII word without hashing a string (isFunctionWordIn);
// longFunctionWords says whether some function word has no key.
var (
	functionKeys      = map[uint64]bool{}
	longFunctionWords bool
)

// isFunctionWordIn is functionWords[string(buf[:n])]. A word of up to 7
// bytes is looked up by its termKeyBytes, read from buf as one number.
func isFunctionWordIn(buf *[16]byte, n int) bool {
	if n > 0 && n <= 7 {
		k := binary.LittleEndian.Uint64(buf[:8])&(1<<(8*n)-1) | uint64(n)<<56 // termKeyBytes(buf[:n])
		if functionKeys[k] {
			return true
		}
	}
	return longFunctionWords && functionWords[string(buf[:n])]
}

// NamelessTopicWords counts the topic words (TopicWords) of q that are
// no names; a name is a capitalised word that does not open the text.
// "What did Caroline research?" has one: a record that uses "research"
// holds all the question asks about.
func NamelessTopicWords(q string) int { return NamelessTopics(q, TopicWords(q)) }

// NamelessTopics is NamelessTopicWords(q) for a caller that has q's
// TopicWords.
func NamelessTopics(q string, topics []string) int {
	opening := strings.TrimLeftFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	n := 0
	for _, w := range topics {
		if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) && !strings.HasPrefix(opening, w) {
			continue
		}
		n++
	}
	return n
}

// TopicWords are the words of text, as written, without function and
// question words (the list ContentTerms drops), possessives and
// contractions read as their first part.
func TopicWords(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' }) {
		l := strings.ToLower(strings.Trim(w, "'"))
		if i := strings.IndexByte(l, '\''); i > 0 {
			l = l[:i]
		}
		if l == "" || functionWords[l] {
			continue
		}
		out = append(out, w)
	}
	return out
}
