package fts

import (
	"slices"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"
)

// The pooled search's counter gives every analyzer's field lengths and
// word frequencies, as bleve's own analyzer (from its registry) gives
// them; with the stems cached, it counts every ASCII text itself.
func TestTermCounterIsBleves(t *testing.T) {
	texts := append(tokenizerTexts(t),
		"Mel's dog's toys", "JOHN'S CAR'S", "it's its' 's s 'S x'S", "The THE the a An AND", "don't won't", "running runs ran Runner",
		"3.14 1,000 e.g. a_b a:b", "naïve Mel’s", "", "!!!", "caroline caroline Caroline's")
	for _, a := range []Analyzer{AnalyzerEnglish, AnalyzerEnglishKeepStop, AnalyzerPlain, AnalyzerStandard} {
		an, err := newAnalyzers(a)
		if err != nil {
			t.Fatal(err)
		}
		pool := cacheStems(an.text)
		c := newTermCounter(pool)
		if c == nil {
			t.Fatalf("analyzer %q: no counter", a)
		}
		rc := registry.NewCache()
		var ref analysis.Analyzer
		if cfg := customAnalyzer(a); cfg != nil {
			ref, err = rc.DefineAnalyzer(analyzerName(a), cfg)
		} else {
			ref, err = rc.AnalyzerNamed(analyzerName(a))
		}
		if err != nil {
			t.Fatal(err)
		}
		// The query words: every term of every fifth text, and words
		// no text has.
		at := map[string]int{"zzyzx": 0, "": 1}
		for i := 0; i < len(texts); i += 5 {
			for _, tok := range ref.Analyze([]byte(texts[i])) {
				if _, ok := at[string(tok.Term)]; !ok {
					at[string(tok.Term)] = len(at)
				}
			}
		}
		var scratch []byte
		for pass := range 2 { // the stems cached in the second
			counted := 0
			for _, text := range texts {
				toks := ref.Analyze([]byte(text))
				want := make([]int32, len(at))
				for _, tok := range toks {
					if j, ok := at[string(tok.Term)]; ok {
						want[j]++
					}
				}
				got := make([]int32, len(at))
				n, ok, s := c.count(text, at, got, scratch)
				scratch = s
				if !ok {
					if slices.ContainsFunc(got, func(v int32) bool { return v != 0 }) {
						t.Fatalf("analyzer %q, %q: counts changed when it gave up", a, text)
					}
					pool.Analyze([]byte(text)) // caches the stems, as the pooled search does
					if pass == 1 && isASCII(text) {
						t.Fatalf("analyzer %q, %q: not counted with its stems cached", a, text)
					}
					continue
				}
				counted++
				if n != len(toks) || !slices.Equal(got, want) {
					t.Fatalf("analyzer %q, %q: length %d counts %v, want %d %v", a, text, n, got, len(toks), want)
				}
			}
			if pass == 1 && counted == 0 {
				t.Fatalf("analyzer %q: nothing counted", a)
			}
		}
	}
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
