package fts

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/hmo-dev/hmo/engine"
)

// refAnalyzer is bleve's own analyzer a (from its registry: the unicode
// tokenizer, no stem cache).
func refAnalyzer(t *testing.T, a Analyzer) analysis.Analyzer {
	t.Helper()
	rc := registry.NewCache()
	var ref analysis.Analyzer
	var err error
	if cfg := customAnalyzer(a); cfg != nil {
		ref, err = rc.DefineAnalyzer(analyzerName(a), cfg)
	} else {
		ref, err = rc.AnalyzerNamed(analyzerName(a))
	}
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// memoryState is everything a Memory's searches read of its documents:
// each term's postings (document, frequency in each field) and document
// frequencies, each document's field lengths, the total lengths.
func memoryState(m *Memory) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var lines []string
	for _, w := range slices.Sorted(maps.Keys(m.postings)) {
		p := m.postings[w]
		var posts []string
		for _, ps := range p.scopes {
			for _, post := range ps.posts {
				posts = append(posts, fmt.Sprintf("%d:%v", m.slots[post.slot].meta.ID, post.tf))
			}
		}
		slices.Sort(posts)
		lines = append(lines, fmt.Sprintf("%q n=%d df=%v %v", w, p.n, p.df, posts))
	}
	for _, id := range slices.Sorted(maps.Keys(m.docs)) {
		d := m.docs[id]
		lines = append(lines, fmt.Sprintf("doc %d lens=%v terms=%d", id, d.n, len(d.refs)))
	}
	lines = append(lines, fmt.Sprintf("total=%v", m.totalLen))
	return fmt.Sprint(lines)
}

// The analysis of the documents a tier's index takes in as records are
// promoted (textTerms: an ASCII text with its stems cached walked in
// place, any other by the analyzer) is bleve's: each text's terms are
// those of bleve's own analyzer, and a Memory changed batch by batch
// (the first with no stem cached, the later ones mostly cached, with
// replacements and deletions) holds exactly the postings, frequencies
// and lengths of one that bleve's token streams built (counter nil).
func TestMemoryTermsAreBleves(t *testing.T) {
	texts := append(tokenizerTexts(t),
		"Mel's dog's toys", "JOHN'S CAR'S", "it's its' 's s 'S x'S", "The THE the a An AND", "don't won't", "running runs ran Runner",
		"3.14 1,000 e.g. a_b a:b", "naïve Mel’s", "", "!!!", "caroline caroline Caroline's")
	for _, a := range []Analyzer{AnalyzerEnglish, AnalyzerEnglishKeepStop, AnalyzerPlain, AnalyzerStandard} {
		t.Run(string(a), func(t *testing.T) {
			fast, err := NewMemoryWith(&Options{Analyzer: a})
			if err != nil {
				t.Fatal(err)
			}
			if fast.counter == nil {
				t.Fatal("no counter: the fast path is not tested")
			}
			ref := refAnalyzer(t, a)
			// Every text, twice: the stems uncached, then cached.
			walked := 0
			for pass := range 2 {
				got := fast.textTerms(texts)
				for i, text := range texts {
					want := analysedTerms(ref.Analyze([]byte(text)))
					if !slices.Equal(got[i], want) {
						t.Fatalf("pass %d, %q:\n got %q\nwant %q", pass, text, got[i], want)
					}
					if pass == 1 {
						if _, ok, _, _ := fast.counter.terms(text, nil, nil); ok {
							walked++
						}
					}
				}
			}
			if walked < len(texts)/2 {
				t.Fatalf("%d of %d texts walked with their stems cached", walked, len(texts))
			}

			// Documents moved in and out in batches, as promotions and
			// demotions do, against bleve's token streams.
			slow, err := NewMemoryWith(&Options{Analyzer: a})
			if err != nil {
				t.Fatal(err)
			}
			slow.counter = nil
			r := rand.New(rand.NewPCG(5, 6))
			doc := func() engine.TextDoc {
				return engine.TextDoc{ID: uint64(1 + r.IntN(400)), Text: texts[r.IntN(len(texts))], Context: texts[r.IntN(len(texts))],
					Role: []string{"", "user", "assistant", "Caroline"}[r.IntN(4)], Scope: []string{"a", "b"}[r.IntN(2)]}
			}
			for step := range 300 {
				n := 9
				if step == 0 {
					n = 300 // the fill: no stem cached yet
				}
				var add []engine.TextDoc
				for range n {
					add = append(add, doc())
				}
				var del []uint64
				for range r.IntN(10) {
					del = append(del, uint64(1+r.IntN(400)))
				}
				for _, m := range []*Memory{fast, slow} {
					if err := m.Apply(add, del, uint64(step)); err != nil {
						t.Fatal(err)
					}
				}
				if step%50 == 0 || step == 299 {
					if g, w := memoryState(fast), memoryState(slow); g != w {
						t.Fatalf("step %d: the index differs from bleve's analysis:\n got %.2000s\nwant %.2000s", step, g, w)
					}
				}
			}
			if !reflect.DeepEqual(fast.totalLen, slow.totalLen) || fast.Len() == 0 {
				t.Fatalf("lengths %v, want %v (%d documents)", fast.totalLen, slow.totalLen, fast.Len())
			}
		})
	}
}
