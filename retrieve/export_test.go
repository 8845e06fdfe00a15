package retrieve

import (
	"maps"
	"time"
)

// What the black-box tests reach of the package's internals.

// SoftMatch is softMatch over candidates 1..n holding docs (a nil doc
// is a candidate without metadata).
func SoftMatch(q *Query, docs []*Doc, lex Lexicon) ([]float64, error) {
	cands := make([]Candidate, len(docs))
	for i, d := range docs {
		cands[i] = Candidate{ID: uint64(i + 1), doc: d}
	}
	return softMatch(q, cands, lex)
}

// ContentWords is contentWords; NameWords is nameWords; StopWords is
// stopWords.
var ContentWords, NameWords, StopWords = contentWords, nameWords, stopWords

// TimeTokens is timeTokens as (lower-cased word, capital) pairs.
func TimeTokens(text string) (words []string, capital []bool) {
	for _, t := range timeTokens(nil, text) {
		words = append(words, t.lower)
		capital = append(capital, t.capital)
	}
	return words, capital
}

// TimeMentionsEveryWord is TimeMentions with every word put through its
// cases, none passed over.
func TimeMentionsEveryWord(text string, ref time.Time) []Span {
	skipWords = false
	defer func() { skipWords = true }()
	return TimeMentions(text, ref)
}

// MayStart is mayStart; MayStartMention is mayStartMention, its words
// listed.
var MayStart = mayStart

func MayStartMention() map[string]bool { return maps.Clone(mayStartMention) }

// ContentKeys is contentKeys; TermKey is termKey.
var ContentKeys, TermKey = contentKeys, termKey

// DocRepeats is d.repeats(turn, names): the reply stage's test from the
// documents' content keys; Repeats is repeats, from their texts.
func DocRepeats(d, turn *Doc, names []string) bool { return d.repeats(turn, names) }

var Repeats = repeats

// FunctionWords is functionWords; Stem is stem.
var FunctionWords, Stem = functionWords, stem

// SelectBest is selectBest over candidates with these ids and scores;
// it returns each one's place in the input, in the order it leaves.
func SelectBest(ids []uint64, scores []float64) []int {
	c := make([]Candidate, len(ids))
	for i := range c {
		c[i] = Candidate{ID: ids[i], Score: scores[i], Text: float64(i)}
	}
	selectBest(c)
	out := make([]int, len(c))
	for i := range c {
		out[i] = int(c[i].Text)
	}
	return out
}

// QueryTests are the set, thing and when tests and the speakers named,
// asked of one Query whose text is each of texts in turn: its memos are
// carried from one text to the next, as a decomposed question's runs
// carry them.
func QueryTests(texts, speakers []string) (set, thing, when []bool, named [][]int) {
	q := &Query{}
	m := NewNameMatcher(speakers)
	for _, t := range texts {
		q.Text = t
		set = append(set, q.asksForSet())
		thing = append(thing, q.asksForThing())
		when = append(when, q.isWhenQuestion())
		named = append(named, m.named(q.questionWords()))
	}
	return set, thing, when, named
}

// PlaceTable is the stages' table of ids to places (places).
type PlaceTable struct{ p *places }

// TakePlaceTable is takePlaces; Drop is dropPlaces.
func TakePlaceTable(hint int) PlaceTable       { return PlaceTable{takePlaces(hint)} }
func (t PlaceTable) Put(id uint64, place int)  { t.p.put(id, place) }
func (t PlaceTable) Get(id uint64) (int, bool) { return t.p.get(id) }
func (t PlaceTable) Drop()                     { dropPlaces(t.p) }

// Fuse is fuse; MixLists is mixLists.
var Fuse, MixLists = fuse, mixLists
