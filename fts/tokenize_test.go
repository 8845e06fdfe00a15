package fts

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/hmo-dev/hmo/synth"
)

// tokenizerTexts are hand-picked texts for the word boundary rules of
// ASCII (each class next to each other), some non-ASCII ones, a sample of
// the synthetic archive's records and, when present, every LoCoMo dev
// turn.
func tokenizerTexts(t *testing.T) []string {
	t.Helper()
	texts := []string{
		"", " ", "a", "_", "__", "'", ".", "a.", ".a", "a.b", "a..b", "a.b.c", "e.g. U.S.A. i.e.", "don't", "'tis", "rock'n'roll",
		"a'", "a''b", "a:b", "a:1", "1:2", "10:30", "a,b", "1,000,000", "1;2", "a;b", "3.5", "3.5.", "v1.2", "1.a", "a.1",
		"a_b", "a_1", "1_a", "_a_", "a_.b", "1_.2", "1._2", "x__y", "1'2", "a1b2", "12ab34", "ab.cd1.2", "1.2a.b",
		"a\"b", "a-b", "a/b", "a@b.com", "#tag", "$5.00", "50%", "C++ and C#", "http://x.org/a?b=c&d=e",
		"line\r\nbreak\rcr\nlf\vvt\fff\ttab", "\x00a\x01b\x7f", "MixedCASE Words", "I'm allergic to shellfish",
		"2024-05-01 at 10:30, 42 times", "What's up?! ... -- \"quoted\" (parens) [brackets] {braces}",
		"Ça va? Naïve café façade", "emoji 😀 and tabs", "日本語のテキスト", "שָׁלוֹם \"א\"ב", "a\u00adb", "a\u200db",
	}
	for _, in := range synth.New(synth.Options{Seed: 7, Records: 2000}).Next(2000) {
		texts = append(texts, in.Text)
	}
	texts = append(texts, locomoTexts(t)...)
	// Random ASCII, weighted towards the characters the rules are about.
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "aZq09_:.',;\" -\n\r!?"
	for range 20000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			if r.IntN(8) == 0 {
				b[i] = byte(r.IntN(128))
			} else {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
		}
		texts = append(texts, string(b))
	}
	return texts
}

// TestASCIITokenizerIsBleves checks that the tokenizer's fast path gives
// bleve's unicode tokenizer's tokens: terms, offsets, positions and
// types.
func TestASCIITokenizerIsBleves(t *testing.T) {
	ref := unicode.NewUnicodeTokenizer()
	fast := asciiTokenizer{inner: ref}
	for _, text := range tokenizerTexts(t) {
		want := tokens(ref.Tokenize([]byte(text)))
		if got := tokens(fast.Tokenize([]byte(text))); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %v\nwant %v", text, got, want)
		}
	}
}

// TestAnalyzersAreBleves checks every analyzer option's text analysis,
// with the fast tokenizer, against the analyzer bleve's registry builds
// from the same configuration.
func TestAnalyzersAreBleves(t *testing.T) {
	texts := tokenizerTexts(t)
	for _, a := range []Analyzer{AnalyzerEnglish, AnalyzerEnglishKeepStop, AnalyzerPlain, AnalyzerStandard} {
		an, err := newAnalyzers(a)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := an.text.(*analysis.DefaultAnalyzer).Tokenizer.(asciiTokenizer); !ok {
			t.Fatalf("analyzer %q: tokenizer %T, want the ASCII fast path", a, an.text.(*analysis.DefaultAnalyzer).Tokenizer)
		}
		c := registry.NewCache()
		var ref analysis.Analyzer
		if cfg := customAnalyzer(a); cfg != nil {
			ref, err = c.DefineAnalyzer(analyzerName(a), cfg)
		} else {
			ref, err = c.AnalyzerNamed(analyzerName(a))
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			want := tokens(ref.Analyze([]byte(text)))
			if got := tokens(an.text.Analyze([]byte(text))); !reflect.DeepEqual(got, want) {
				t.Fatalf("analyzer %q, %q:\n got %v\nwant %v", a, text, got, want)
			}
		}
	}
}

func FuzzASCIITokenizer(f *testing.F) {
	for _, s := range []string{"don't 3.5 e.g. a_b 1,000 a:b", "x.1 1.x _ ''", "naïve"} {
		f.Add(s)
	}
	ref := unicode.NewUnicodeTokenizer()
	fast := asciiTokenizer{inner: ref}
	f.Fuzz(func(t *testing.T, text string) {
		want := tokens(ref.Tokenize([]byte(text)))
		if got := tokens(fast.Tokenize([]byte(text))); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %v\nwant %v", text, got, want)
		}
	})
}

func BenchmarkTokenize(b *testing.B) {
	text := []byte("Caroline said she'd been painting the lake at 5.30 again, and don't forget: the pottery class starts May 3rd.")
	for _, tc := range []struct {
		name string
		tz   analysis.Tokenizer
	}{{"bleve", unicode.NewUnicodeTokenizer()}, {"ascii", asciiTokenizer{inner: unicode.NewUnicodeTokenizer()}}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				tc.tz.Tokenize(text)
			}
		})
	}
}
