package fts

import (
	"maps"
	"testing"

	index "github.com/blevesearch/bleve_index_api"
)

// Apply's analysis (indexFreqs: the pool's counter, else its analyzer
// with the stems cached) gives every field the length, terms,
// frequencies and size the index's own analyzer gives it
// (analyseForIndex), for every analyzer; with the stems cached, every
// ASCII text is counted without a token stream.
func TestIndexFreqsAreAnalysers(t *testing.T) {
	texts := append(tokenizerTexts(t),
		"Mel's dog's toys", "JOHN'S CAR'S", "it's its' 's s 'S x'S", "The THE the a An AND", "don't won't", "running runs ran Runner",
		"3.14 1,000 e.g. a_b a:b", "naïve Mel’s", "!!!", "the and of", "caroline caroline Caroline's caroline")
	var docs []engineDoc
	for i, text := range texts {
		d := engineDoc{ID: uint64(i + 1), Text: text, Role: []string{"user", "assistant", ""}[i%3]}
		if i > 0 && i%2 == 0 {
			d.Context = texts[i-1] // shared with the text before
		}
		docs = append(docs, d)
	}
	for _, a := range allAnalyzers {
		an, err := newAnalyzers(a)
		if err != nil {
			t.Fatal(err)
		}
		pool := analyzers{text: cacheStems(an.text), keyword: an.keyword}
		x := &Index{an: an, pool: pool, counter: newTermCounter(pool.text)}
		if x.counter == nil {
			t.Fatalf("analyzer %q: no counter", a)
		}
		toks, want := an.analyseForIndex(docs)
		for pass := range 2 { // the stems cached in the second
			got := x.indexFreqs(docs)
			for i := range docs {
				for f := range nFields {
					g, w := got[i][f], want[i][f]
					if (g == nil) != (w == nil) {
						t.Fatalf("analyzer %q, doc %d field %d: got %v, want %v", a, i, f, g, w)
					}
					if g == nil {
						continue
					}
					if g.length != w.length || g.size != w.size || g.size != g.freqs.Size() || !sameFreqs(g.freqs, w.freqs) {
						t.Fatalf("analyzer %q, doc %d field %d (%q): length %d size %d %v, want %d %d %v",
							a, i, f, docFields(&docs[i])[f], g.length, g.size, g.freqs, w.length, w.size, w.freqs)
					}
				}
				if l, wl := got[i].lengths(), toks[i].lengths(); l != wl {
					t.Fatalf("analyzer %q, doc %d: lengths %v, want %v", a, i, l, wl)
				}
			}
			if pass == 1 {
				for _, text := range texts {
					if _, ok, _ := x.counter.freqs(text, optScored, nil); ok != isASCII(text) {
						t.Fatalf("analyzer %q, %q: counted %v with the stems cached", a, text, ok)
					}
				}
			}
		}
	}
}

// sameFreqs reports whether a and b hold the same terms with the same
// frequencies and no locations.
func sameFreqs(a, b index.TokenFrequencies) bool {
	return maps.EqualFunc(a, b, func(x, y *index.TokenFreq) bool {
		return string(x.Term) == string(y.Term) && x.Frequency() == y.Frequency() && len(x.Locations) == 0 && len(y.Locations) == 0
	})
}
