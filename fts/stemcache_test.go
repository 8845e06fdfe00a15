package fts

import (
	"reflect"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
)

// TestStemCacheAnalysesAsBleve checks that an analyzer with cached stems
// gives bleve's own token stream for every text, when the stems come from
// the stemmer and again when they come from the cache, for every analyzer
// option; over hand-picked texts and, when present, every LoCoMo dev turn.
func TestStemCacheAnalysesAsBleve(t *testing.T) {
	texts := []string{
		"", "I'm allergic to shellfish", "Caroline's PAINTINGS were painted, painting, paints",
		"running runs ran runner's", "generously generous generosity", "Ça va? Naïve café façade",
		"2024-05-01 at 10:30, 42 times", "the the THE a an", "skies sky's skiing skied", "agreed agreement agreeing",
		"emoji 😀 and tabs\tand\nnewlines", "Melanie\nMel\nmelanies",
	}
	texts = append(texts, locomoTexts(t)...)
	for _, a := range []Analyzer{AnalyzerEnglish, AnalyzerEnglishKeepStop, AnalyzerPlain, AnalyzerStandard} {
		plain, err := newAnalyzers(a)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := newAnalyzers(a)
		if err != nil {
			t.Fatal(err)
		}
		cached := cacheStems(fresh.text)
		if stems := a == AnalyzerEnglish || a == AnalyzerEnglishKeepStop; stems != hasStemCache(cached) {
			t.Fatalf("analyzer %q: stem cache %t, want %t", a, !stems, stems)
		}
		for pass := range 2 {
			for _, text := range texts {
				want := tokens(plain.text.Analyze([]byte(text)))
				if got := tokens(cached.Analyze([]byte(text))); !reflect.DeepEqual(got, want) {
					t.Fatalf("analyzer %q, pass %d, %q: cached %v, bleve %v", a, pass, text, got, want)
				}
			}
		}
	}
}

type tok struct {
	term            string
	start, end, pos int
	typ             analysis.TokenType
	keyword         bool
}

func tokens(ts analysis.TokenStream) []tok {
	out := make([]tok, len(ts))
	for i, t := range ts {
		out[i] = tok{string(t.Term), t.Start, t.End, t.Position, t.Type, t.KeyWord}
	}
	return out
}

func hasStemCache(a analysis.Analyzer) bool {
	da, ok := a.(*analysis.DefaultAnalyzer)
	if !ok {
		return false
	}
	for _, f := range da.TokenFilters {
		if _, ok := f.(*stemCache); ok {
			return true
		}
	}
	return false
}
