package retrieve_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hmo-dev/hmo/internal/vecscan"
	"github.com/hmo-dev/hmo/retrieve"
)

// mapLexicon embeds words as fixed vectors; a word it lacks has none.
type mapLexicon struct {
	vecs  map[string][]float32
	calls int
	err   error
	short bool // answer one vector too few
}

func (l *mapLexicon) WordVectors(words []string) ([][]float32, error) {
	l.calls++
	if l.err != nil {
		return nil, l.err
	}
	out := make([][]float32, len(words))
	for i, w := range words {
		out[i] = l.vecs[w]
	}
	if l.short && len(out) > 0 {
		out = out[1:]
	}
	return out, nil
}

// refSoftMatch is the soft match as its documentation states it, with
// nothing saved: for each candidate, the mean over the question's
// content words (speakers' names aside, repeats counted) of the best of
// 1 for the same word and the cosine with every other word of the
// candidate's text, rescaled above the floor 0.3.
func refSoftMatch(question string, docs []*retrieve.Doc, vecs map[string][]float32) []float64 {
	var names []string
	for _, d := range docs {
		if d != nil {
			names = append(names, retrieve.NameWords(strings.ToLower(d.Speaker))...)
		}
	}
	var qwords []string
	for _, w := range retrieve.ContentWords(question) {
		if !slices.Contains(names, w) {
			qwords = append(qwords, w)
		}
	}
	if len(qwords) == 0 {
		return nil
	}
	cos := func(a, b []float32) float64 {
		if len(a) == 0 || len(a) != len(b) {
			return 0
		}
		return float64(vecscan.Dot(a, b))
	}
	out := make([]float64, len(docs))
	for i, d := range docs {
		if d == nil {
			continue
		}
		dwords := retrieve.ContentWords(d.Text)
		if len(dwords) == 0 {
			continue
		}
		var total float64
		for _, qw := range qwords {
			best := 0.0
			for _, dw := range dwords {
				s := cos(vecs[qw], vecs[dw])
				if dw == qw {
					s = 1
				}
				best = max(best, s)
			}
			if best > 0.3 {
				total += (best - 0.3) / 0.7
			}
		}
		out[i] = total / float64(len(qwords))
	}
	return out
}

func unit(v ...float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// TestSoftMatchReference checks that the soft match, which skips what the
// mean does not need, equals the plain computation bit for bit: related
// words, words the lexicon does not know, repeated words, speakers'
// names, candidates without metadata or content words, with the docs as
// the engine caches them (Analyse) and as read.
func TestSoftMatchReference(t *testing.T) {
	vecs := map[string][]float32{
		"allergy": unit(1, 0, 0), "allergic": unit(0.9, 0.436, 0), "shellfish": unit(0, 1, 0),
		"food": unit(0.6, 0.8, 0), "peanuts": unit(0.5, 0.7, 0.2), "weather": unit(0, -1, 0),
		"nice": unit(-1, 0, 0), "cat": unit(0, 0, 1), "kitten": unit(0.1, 0, 0.99), "dog": unit(0.2, 0.3, 0.93),
		"pixel": unit(0.3, 0.3, 0.3), "painting": unit(0.7, 0.1, 0.7), "art": unit(0.6, 0.2, 0.77),
		"melanie": unit(1, 1, 1), "caroline": unit(1, -1, 1), "short": {1, 0}, // a vector of the wrong length
	}
	doc := func(speaker, text string) *retrieve.Doc { return &retrieve.Doc{ID: 1, Speaker: speaker, Text: text} }
	cases := []struct {
		name     string
		question string
		docs     []*retrieve.Doc
	}{
		{"related words", "Ann's food allergy", []*retrieve.Doc{doc("Ann", "I'm allergic to shellfish"), doc("Bob", "the weather is nice")}},
		{"held and related", "food allergy peanuts", []*retrieve.Doc{doc("Ann", "my food allergy is peanuts"), doc("Ann", "allergic to food"), doc("Ann", "peanuts")}},
		{"unknown words", "zorblax allergy quux", []*retrieve.Doc{doc("Ann", "zorblax shellfish"), doc("Ann", "quux quux allergic"), doc("Ann", "frobnicate wibble")}},
		{"unknown only", "zorblax quux", []*retrieve.Doc{doc("Ann", "zorblax"), doc("Ann", "allergy food")}},
		{"repeated words", "cat cat dog kitten cat", []*retrieve.Doc{doc("Ann", "my kitten and my dog"), doc("Ann", "cat cat cat"), doc("Ann", "the weather")}},
		{"speakers' names", "What did Melanie say to Caroline about painting?", []*retrieve.Doc{doc("Melanie", "I love art and painting, Caroline"), doc("Caroline", "Melanie's cat is Pixel")}},
		{"name of a third person", "Melanie's painting", []*retrieve.Doc{doc("Caroline", "Melanie painted art")}},
		{"two-word speaker", "Ann Lee cat", []*retrieve.Doc{doc("Ann Lee", "a kitten, Lee"), doc("Bob", "Ann's dog")}},
		{"no metadata", "allergy food", []*retrieve.Doc{nil, doc("Ann", "shellfish"), nil}},
		{"no content words", "allergy", []*retrieve.Doc{doc("Ann", ""), doc("Ann", "yes it is, so what?"), doc("Ann", "allergic")}},
		{"vector of another length", "short cat", []*retrieve.Doc{doc("Ann", "kitten short"), doc("Ann", "allergy")}},
		{"negative cosines", "weather", []*retrieve.Doc{doc("Ann", "shellfish nice"), doc("Ann", "allergy")}},
		{"names only", "Melanie and Caroline?", []*retrieve.Doc{doc("Melanie", "cat"), doc("Caroline", "dog")}},
		{"stop words only", "what did you do?", []*retrieve.Doc{doc("Ann", "cat")}},
		{"no candidates", "cat", nil},
	}
	for _, tc := range cases {
		for _, analysed := range []bool{false, true} {
			docs := make([]*retrieve.Doc, len(tc.docs))
			for i, d := range tc.docs {
				if d != nil {
					c := *d
					if analysed {
						c.Analyse()
					}
					docs[i] = &c
				}
			}
			want := refSoftMatch(tc.question, docs, vecs)
			got, err := retrieve.SoftMatch(&retrieve.Query{Text: tc.question}, docs, &mapLexicon{vecs: vecs})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !slices.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("%s (analysed %v): soft match %v, want %v", tc.name, analysed, got, want)
			}
		}
	}
}

// TestSoftMatchLexiconFailure checks that a lexicon's error is returned
// and that a lexicon answering too few vectors gives no soft match,
// even when every candidate holds every question word.
func TestSoftMatchLexiconFailure(t *testing.T) {
	docs := []*retrieve.Doc{{ID: 1, Text: "cat food"}}
	q := &retrieve.Query{Text: "cat food"}
	boom := errors.New("boom")
	if _, err := retrieve.SoftMatch(q, docs, &mapLexicon{err: boom}); !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
	if got, err := retrieve.SoftMatch(q, docs, &mapLexicon{short: true}); err != nil || got != nil {
		t.Errorf("short answer: %v, %v; want nil, nil", got, err)
	}
}

// TestSoftMatchAgainAndAtOnce: the soft match keeps its working lists
// from one call to the next; calls of many sizes (questions of 1 to 8
// words, 0 to 120 candidates of 0 to 40 words, known and unknown words),
// one after another and on four goroutines at once, each equal the
// plain computation bit for bit, whatever the call before left.
func TestSoftMatchAgainAndAtOnce(t *testing.T) {
	words := []string{"allergy", "allergic", "shellfish", "food", "peanuts", "weather", "nice", "cat", "kitten", "dog",
		"painting", "art", "zorblax", "quux", "wibble", "river", "garden", "piano", "novel", "cairo"}
	vecs := map[string][]float32{}
	r := rand.New(rand.NewPCG(11, 12))
	for i, w := range words {
		if i%5 != 4 { // every fifth word is unknown
			vecs[w] = unit(float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64()))
		}
	}
	text := func(r *rand.Rand, n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 13))
			for round := range 150 {
				question := text(r, 1+r.IntN(8))
				docs := make([]*retrieve.Doc, r.IntN(121))
				for i := range docs {
					if r.IntN(20) == 0 {
						continue // no metadata
					}
					d := &retrieve.Doc{ID: uint64(i + 1), Speaker: "Ann", Text: text(r, r.IntN(41))}
					if r.IntN(2) == 0 {
						d.Analyse()
					}
					docs[i] = d
				}
				want := refSoftMatch(question, docs, vecs)
				got, err := retrieve.SoftMatch(&retrieve.Query{Text: question}, docs, &mapLexicon{vecs: vecs})
				if err != nil {
					t.Error(err)
					return
				}
				if !slices.Equal(got, want) || (got == nil) != (want == nil) {
					t.Errorf("goroutine %d, round %d (%q, %d docs): soft match %v, want %v", g, round, question, len(docs), got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
