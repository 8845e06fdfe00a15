package retrieve

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Query is what the stages see of one recall request.
type Query struct {
	Text   string
	Vector []float32 // the query's embedding; nil when there is none
	K      int       // results wanted
	// Candidates is how many candidates each generator returns (at
	// least K).
	Candidates int
	// Now is the time relative expressions in the question ("last
	// week") are resolved against; zero means no relative resolution.
	Now time.Time
	// VectorNull is the query's similarity to unrelated records of the
	// store (see Null); zero when unknown.
	VectorNull Null
	// TextFloor, when positive, is a lexical score that at least
	// Candidates records are known to reach, for Source.Text to search
	// faster; it changes no result. The prf stage sets it for its second
	// search: the expanded question scores every first-pass candidate at
	// least as high as the question did.
	TextFloor float64
	// TextPool and TextPostings bound the cost of a search on a large
	// archive (the prf stage's second search sets them): when Text's
	// words have more than TextPostings postings (one word in one field
	// of one record), Source.Text may score only the records of
	// TextPool instead of every record. A source that cannot, or a
	// TextPostings of 0, searches every record.
	TextPool     []uint64
	TextPostings int

	// vec, when set, holds the vector candidates of this Vector, asked
	// once for all the runs of a multi-part question (runParts).
	vec *vectorMemo
	// set is AsksForSet of the text, which three stages ask.
	set textMemo[bool]
	// words are questionWords of the text, which the set and thing tests
	// and the speaker's name read.
	words textMemo[[]qword]
	// when is IsWhenQuestion of the text.
	when textMemo[bool]
	// terms is newTermSet(ContentTerms(termsText)), which calibrate and
	// the context and speech act priors read.
	terms     *termSet
	termsText string
	// resolved are the resolved spans of TimeMentions(resolvedText,
	// resolvedNow) (when resolvedDone), which the time prior and H-Mem's
	// temporal relevance read.
	resolved     []Span
	resolvedDone bool
	resolvedText string
	resolvedNow  time.Time
}

// resolvedMentions are the resolved spans of TimeMentions(q.Text,
// q.Now), worked out once per text and time; the caller must not change
// them.
func (q *Query) resolvedMentions() []Span {
	if !q.resolvedDone || q.resolvedText != q.Text || !q.resolvedNow.Equal(q.Now) || q.resolvedNow.Location() != q.Now.Location() {
		var spans []Span
		for _, s := range TimeMentions(q.Text, q.Now) {
			if s.Resolved() {
				spans = append(spans, s)
			}
		}
		q.resolved, q.resolvedDone, q.resolvedText, q.resolvedNow = spans, true, q.Text, q.Now
	}
	return q.resolved
}

// contentTerms is newTermSet(ContentTerms(q.Text)), worked out once per
// text; the caller must not change it.
func (q *Query) contentTerms() *termSet {
	if q.terms == nil || q.termsText != q.Text {
		q.terms, q.termsText = newTermSet(ContentTerms(q.Text)), q.Text
	}
	return q.terms
}

// AsksForSet is AsksForSet(q.Text), worked out once per text. A copy of
// q made after carries the answer: a caller that asks it of a query of
// the text alone, then copies that query into the one it runs, spares
// the stages the work.
func (q *Query) AsksForSet() bool { return q.asksForSet() }

// asksForSet is AsksForSet(q.Text), worked out once per text.
func (q *Query) asksForSet() bool {
	return q.set.of(q.Text, func(text string) bool { return asksForSet(text, q.questionWords()) })
}

// isWhenQuestion is IsWhenQuestion(q.Text), worked out once per text.
func (q *Query) isWhenQuestion() bool {
	return q.when.of(q.Text, IsWhenQuestion)
}

// questionWords is questionWords(q.Text), worked out once per text; the
// caller must not change them.
func (q *Query) questionWords() []qword {
	return q.words.of(q.Text, questionWords)
}

// textMemo is what a function of a query's text gave for the text it
// was last asked of.
type textMemo[T any] struct {
	v    T
	text string
	done bool
}

// of returns f(text), worked out once per text.
func (m *textMemo[T]) of(text string, f func(string) T) T {
	if !m.done || m.text != text {
		m.v, m.text, m.done = f(text), text, true
	}
	return m.v
}

// vectorMemo is the vector generator's answer for one query vector and
// candidate count, shared by the runs of one question's parts.
type vectorMemo struct {
	done bool
	hits []Hit
}

// Null describes the cosine similarity of a query to records spread
// evenly over the store: what an unrelated record scores. The calibrated
// relevance measures a candidate against it.
type Null struct {
	Mean, SD float64
}

// Hit is one candidate from one generator with its raw score.
type Hit struct {
	ID    uint64
	Score float64
	// Coverage is the IDF-weighted share of the query's terms the record
	// holds, from text generators that compute it; 0 otherwise.
	Coverage float64
}

// Doc is what the priors need of a record.
type Doc struct {
	ID   uint64 // 0 when the record is gone
	Prev uint64 // previous record of the same session, 0 for none
	// Context is the turn indexed with the record as its context (the
	// text and vector of the record hold its words), 0 when the record
	// is indexed alone.
	Context uint64
	// Derived marks a record distilled from turns (a fact, a summary)
	// rather than a turn of the conversation.
	Derived bool
	Scope   string
	Session string
	Speaker string // the record's own role or speaker
	Time    time.Time
	Text    string // the record's own text, without context
	// What Analyse derives from Text, when analysed is set: the termKey
	// of each of its distinct content terms (ContentTerms; nil when one
	// of them has no key) and whether it is mainly a question
	// (IsQuestion), which the default stages read for every candidate,
	// and lazy, what fewer stages read, derived at their first use.
	// Otherwise the stages compute them from Text.
	keys     []uint64
	question bool
	analysed bool
	lazy     *lazyDerived
}

// lazyDerived is what an analysed Doc derives from its text when a stage
// first asks: its time expressions, read only for questions that name a
// time, and its content words, read only for the results' soft match.
// Copies of the Doc share it, so a source's cached Doc derives each once.
// Safe for concurrent use.
type lazyDerived struct {
	spansOnce sync.Once
	spans     []Span      // TimeMentions of the text, resolved against Time
	spansDone atomic.Bool // spans derived (deriveMentions passes over the doc)
	wordsOnce sync.Once
	words     string // contentWords of the text joined by spaces: one string, about half the size of Text
}

// Analyse computes once what the stages derive from d.Text on every
// query (its content terms and speech act), and prepares what some
// derive (its time mentions, its content words) to be computed once at
// their first use, so that a source that caches documents pays for each
// once per record. The stages give the same results with or without it.
// d's Text and Time must not change afterwards.
func (d *Doc) Analyse() {
	d.question, d.analysed = IsQuestion(d.Text), true
	d.lazy = &lazyDerived{}
	d.keys = contentKeys(d.Text)
}

// contentKeys is the termKey of each distinct content term of text
// (ContentTerms, in its order), nil when one of them has no key (a long
// term: coverage then reads the text). An ASCII word is lower-cased and
// stemmed in a buffer, as eachTerm does it with strings.
func contentKeys(text string) []uint64 {
	var buf [32]uint64
	keys, long := buf[:0], false
	add := func(k uint64) {
		if k == 0 {
			long = true
		}
		// termKey is distinct for distinct terms: a key seen is its
		// term seen.
		if !long && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	var lower [16]byte
	eachWord(text, func(word string) {
		if len(word) > len(lower) || !isASCII(word) {
			if w := strings.ToLower(word); len(w) >= 2 && !functionWords[w] {
				add(termKey(stem(w)))
			}
			return
		}
		w := lower[:len(word)]
		for i := range len(word) {
			c := word[i]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			w[i] = c
		}
		if len(w) < 2 || isFunctionWordIn(&lower, len(w)) {
			return
		}
		// stem: the plural's s, then the first stemRunes bytes (runes,
		// in ASCII).
		if len(w) >= 4 && w[len(w)-1] == 's' && w[len(w)-2] != 's' {
			w = w[:len(w)-1]
		}
		add(termKeyBytes(w[:min(len(w), stemRunes)]))
	})
	if long {
		return nil
	}
	return append(make([]uint64, 0, len(keys)), keys...)
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// eachContentWord calls f with each of d's content words
// (contentWords of its text), in order.
func (d *Doc) eachContentWord(f func(string)) {
	if !d.analysed {
		for _, w := range contentWords(d.Text) {
			f(w)
		}
		return
	}
	l := d.lazy
	l.wordsOnce.Do(func() { l.words = strings.Join(contentWords(d.Text), " ") })
	for rest := l.words; rest != ""; {
		w, tail, _ := strings.Cut(rest, " ")
		f(w)
		rest = tail
	}
}

// mentions are d's time expressions (TimeMentions of its text).
func (d *Doc) mentions() []Span {
	if !d.analysed {
		return TimeMentions(d.Text, d.Time)
	}
	l := d.lazy
	l.spansOnce.Do(func() {
		l.spans = TimeMentions(d.Text, d.Time)
		l.spansDone.Store(true)
	})
	return l.spans
}

// isQuestion is IsQuestion of d's text.
func (d *Doc) isQuestion() bool {
	if d.analysed {
		return d.question
	}
	return IsQuestion(d.Text)
}

// ownCoverage is OwnCoverage of ts's terms in d's text.
func (d *Doc) ownCoverage(ts *termSet) float64 {
	if !d.analysed || d.keys == nil {
		return OwnCoverage(ts.terms, d.Text)
	}
	return ts.coverage(d.keys)
}

// Source supplies one query's candidates and metadata. The engine
// implements it over the archive and over the tier views. It need not
// be safe for concurrent use, except that Vector may run concurrently
// with Text and Docs: the lexical search and its feedback search (the
// prf stage, which reads the best first-pass records) run while the
// vector candidates are found.
type Source interface {
	// Text returns up to c lexical candidates, best first.
	Text(ctx context.Context, q *Query, c int) ([]Hit, error)
	// Vector returns up to c vector candidates (cosine), best first. It
	// answers for q's Vector and the source's filters, not for q's Text:
	// the parts of a decomposed question, which share the whole
	// question's vector, ask it once.
	Vector(ctx context.Context, q *Query, c int) ([]Hit, error)
	// Docs returns the metadata of ids, in order; a record that is gone
	// has a zero Doc.
	Docs(ids []uint64) ([]Doc, error)
}

// Prefetcher is implemented by a Source that can read ahead the metadata
// Docs will be asked for (into a cache): the pipeline hands it the vector
// candidates as soon as it has them, while the lexical search may still
// run, so that reading them uses a core the search leaves idle. Prefetch
// may run concurrently with Text and Docs; it reports no error (Docs
// does).
type Prefetcher interface {
	Prefetch(ids []uint64)
}

// DocKeeper is implemented by a Source that keeps its records'
// documents (the tier views): DocRefs returns those it keeps, in the
// order of ids, nil for a record it does not hold, rather than copies
// (Source.Docs), for the stages to read in place. Neither the stages nor
// the source change them afterwards.
type DocKeeper interface {
	DocRefs(ids []uint64) []*Doc
}

// Precomputed is implemented by a Source whose Vector answers from
// candidates it already holds (the tier views, scanned before the
// pipeline runs), without work worth overlapping: the pipeline then runs
// the lexical search and the vector candidates one after the other on
// the calling goroutine, rather than starting a goroutine and waiting
// for it. The results are the same either way.
type Precomputed interface {
	PrecomputedVector() bool
}

// Candidate is a record under consideration with the scores stages gave
// it.
type Candidate struct {
	ID       uint64
	Text     float64 // raw lexical score; 0 when the text generator did not return it
	Vector   float64 // cosine; 0 when the vector generator did not return it
	Coverage float64 // lexical coverage (Hit.Coverage)
	Fused    float64 // after fusion, before priors
	Score    float64 // final score, higher is better
	// Relevance is the calibrated relevance on [0, 1] (see Relevance):
	// comparable across queries and stores, unlike Score.
	Relevance float64
	// VectorZ is Vector in standard deviations above the query's null
	// (Query.VectorNull); 0 when either is unknown.
	VectorZ float64
	// OwnCoverage is the share of the query's content terms the record's
	// own text holds (OwnCoverage).
	OwnCoverage float64
	// SoftMatch is the mean best word-vector match of the query's
	// content words with the record's own words, on [0, 1] (1 for the
	// same words; related words count in part); 0 without a Lexicon.
	SoftMatch float64
	doc       *Doc
}

// keptDocs is loadDocs from a DocKeeper: each candidate reads the
// document the source keeps, as loadDocs attaches the copy Docs returns.
func keptDocs(cands []Candidate, ids []uint64, dk DocKeeper) error {
	refs := dk.DocRefs(ids)
	if len(refs) != len(ids) {
		return fmt.Errorf("retrieve: source returned %d docs for %d ids", len(refs), len(ids))
	}
	for i, d := range refs {
		if d != nil && d.ID == cands[i].ID {
			cands[i].doc = d
		}
	}
	return nil
}
