package retrieve_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/hmo-dev/hmo/retrieve"
	"github.com/hmo-dev/hmo/synth"
)

// refTimeTokens is the tokenizer TimeMentions had before it stopped
// allocating per token: strings.FieldsFunc on ASCII letters and digits,
// strings.ToLower, the ordinal suffixes dropped.
func refTimeTokens(text string) (words []string, capital []bool) {
	for _, f := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		words = append(words, strings.ToLower(f))
		capital = append(capital, f[0] >= 'A' && f[0] <= 'Z')
	}
	for i, w := range words {
		for _, suf := range []string{"st", "nd", "rd", "th"} {
			if n := strings.TrimSuffix(w, suf); n != w && n != "" && len(n) <= 6 && strings.Trim(n, "0123456789") == "" {
				words[i] = n
			}
		}
	}
	return words, capital
}

func TestTimeTokensAsFieldsFunc(t *testing.T) {
	texts := []string{
		"", " ", "May 7th 2023", "on the 1st, 2nd and 3rd", "st nd 4TH 12345678th 1234567th 123456th",
		"Ünïcode Straße 5th MAY", "a\xffb\xc3 7th", "LAST week!! two-weeks ago", "2023th 31st_Dec",
		"th", "1st", "x1st", "01st", "Yesterday...Tomorrow",
	}
	for _, in := range synth.New(synth.Options{Seed: 11, Records: 2000}).Next(2000) {
		texts = append(texts, in.Text)
	}
	r := rand.New(rand.NewPCG(3, 5))
	const alphabet = "aAzZ09 7stndrh.,'-\xc3\xa9\xff"
	for range 20000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		texts = append(texts, string(b))
	}
	for _, text := range texts {
		ww, wc := refTimeTokens(text)
		gw, gc := retrieve.TimeTokens(text)
		if !slices.Equal(gw, ww) || !slices.Equal(gc, wc) {
			t.Fatalf("%q: tokens %q %v, want %q %v", text, gw, gc, ww, wc)
		}
	}
}

func FuzzTimeTokens(f *testing.F) {
	for _, s := range []string{"May 7th 2023", "Ünïcode 5TH", "a\xffb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ww, wc := refTimeTokens(text)
		gw, gc := retrieve.TimeTokens(text)
		if !slices.Equal(gw, ww) || !slices.Equal(gc, wc) {
			t.Fatalf("%q: tokens %q %v, want %q %v", text, gw, gc, ww, wc)
		}
	})
}

// TimeMentions reads a text in at most two allocations when it names
// no time: the tokens, and a lower-cased copy for a text with capitals.
func TestTimeMentionsAllocations(t *testing.T) {
	text := "Melanie said the pottery class was the best thing she had tried, and Caroline agreed with her."
	if n := testing.AllocsPerRun(100, func() { retrieve.TimeMentions(text, day(2023, 5, 10)) }); n > 2 {
		t.Errorf("%v allocations, want at most 2", n)
	}
}

// refIsQuestion is IsQuestion as it counted words before: with
// strings.Fields.
func refIsQuestion(text string) bool {
	var qw, sw int
	start := 0
	for i, r := range text {
		if r != '?' && r != '.' && r != '!' && r != '\n' {
			continue
		}
		n := len(strings.Fields(text[start:i]))
		if r == '?' {
			qw += n
		} else {
			sw += n
		}
		start = i + 1
	}
	sw += len(strings.Fields(text[start:]))
	return qw > 0 && qw >= sw
}

func TestIsQuestionAsFields(t *testing.T) {
	texts := []string{"", "?", "a b?", "a b? c d e.", "what\u00a0is\u2003it? no", "x\x85y? z", "a\xffb? c", "\t\v\f\r ?"}
	for _, in := range synth.New(synth.Options{Seed: 12, Records: 500}).Next(500) {
		texts = append(texts, in.Text)
	}
	r := rand.New(rand.NewPCG(8, 9))
	alphabet := []string{"a", "b", " ", "?", ".", "!", "\n", "\t", "\u00a0", "\u2003", "\u0085", "\xff", "é"}
	for range 20000 {
		var b strings.Builder
		for range r.IntN(16) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		if got, want := retrieve.IsQuestion(text), refIsQuestion(text); got != want {
			t.Fatalf("%q: IsQuestion %t, want %t", text, got, want)
		}
	}
}

// IsQuestion counts words without allocating.
func TestIsQuestionAllocations(t *testing.T) {
	text := "Did you go? We went to the lake. Was it cold? It was, very."
	if n := testing.AllocsPerRun(100, func() { retrieve.IsQuestion(text) }); n != 0 {
		t.Errorf("%v allocations, want none", n)
	}
}

// TimeMentions passes over the words that start no expression: with
// every word put through its cases, it finds the same mentions.
func TestTimeMentionsSkipNoWord(t *testing.T) {
	vocab := []string{"yesterday", "Today", "tonight", "tomorrow", "last", "next", "this", "past", "ago", "recently", "weekend",
		"a", "an", "one", "two", "ten", "few", "couple", "of", "several", "3", "12", "2023", "1999", "7th", "31st", "May", "may",
		"june", "Jan", "mar", "Sept", "friday", "Monday", "day", "days", "week", "weeks", "month", "years", "summer", "fall",
		"night", "the", "lake", "went", "we", "and", "on"}
	texts := []string{"two weeks ago", "a couple of days ago", "May 7th 2023", "last Friday and next summer"}
	for _, in := range synth.New(synth.Options{Seed: 13, Records: 2000}).Next(2000) {
		texts = append(texts, in.Text)
	}
	r := rand.New(rand.NewPCG(21, 22))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(vocab[r.IntN(len(vocab))])
			b.WriteString(" ")
		}
		texts = append(texts, b.String())
	}
	for _, ref := range []time.Time{{}, day(2023, 5, 10)} {
		for _, text := range texts {
			got, want := retrieve.TimeMentions(text, ref), retrieve.TimeMentionsEveryWord(text, ref)
			if !slices.Equal(got, want) {
				t.Fatalf("%q: mentions %v, want %v", text, got, want)
			}
		}
	}
}

// mayStart passes over a word by its length and first and last letters
// before it looks it up: it answers as the lookup does, for the words
// that start an expression, their near misses and random words.
func TestMayStartAsLookup(t *testing.T) {
	set := retrieve.MayStartMention()
	words := []string{"", "s", "z", "0", "1999", "7", "the", "lake", "aa", "annn", "tt"}
	for w := range set {
		words = append(words, w, w+"s", w[1:], w[:len(w)-1], "x"+w, w+w, strings.ToUpper(w), w[:1]+"x"+w[len(w)-1:])
	}
	r := rand.New(rand.NewPCG(51, 52))
	const alphabet = "abcdefghijklmnopqrstuvwxyz09A\xff"
	for range 50000 {
		b := make([]byte, 1+r.IntN(10))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		words = append(words, string(b))
	}
	for _, w := range words {
		if got := retrieve.MayStart(w); got != set[w] {
			t.Fatalf("%q: mayStart %t, want %t", w, got, set[w])
		}
	}
}

// A Doc's content keys are the termKey of each of ContentTerms, nil when
// one has none.
func TestContentKeysAreContentTerms(t *testing.T) {
	texts := []string{"", "I'm allergic to Shellfish", "The DOGS dogs dog's class classes", "Ünïcode WÖRDS straße ÉCOLE",
		"a\xffb Supercalifragilistic supercalifragilisticexpialidocious 12345678 x1", "naïve café ΣΟΦΙΑ ΣΟΦΟΣ İstanbul"}
	for _, in := range synth.New(synth.Options{Seed: 14, Records: 2000}).Next(2000) {
		texts = append(texts, in.Text)
	}
	r := rand.New(rand.NewPCG(31, 32))
	alphabet := []string{"a", "B", "s", "S", "z", "é", "É", "İ", "Σ", " ", ".", "'", "7", "\xff", "ß"}
	for range 20000 {
		var b strings.Builder
		for range r.IntN(24) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		terms := retrieve.ContentTerms(text)
		want := make([]uint64, len(terms))
		for i, term := range terms {
			if want[i] = retrieve.TermKey(term); want[i] == 0 {
				want = nil
				break
			}
		}
		if got := retrieve.ContentKeys(text); !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("%q: keys %v, want %v", text, got, want)
		}
	}
}

// refContentTerms is ContentTerms as first written: words split by
// strings.FieldsFunc at every rune that is no letter or digit, each
// lower-cased, function words and one-letter words left out, stemmed.
func refContentTerms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		w := strings.ToLower(f)
		if len(w) < 2 || retrieve.FunctionWords[w] {
			continue
		}
		if w = retrieve.Stem(w); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// ContentTerms and ContentKeys split words and leave function words out
// as the reference does (an ASCII byte classed by a table, a function
// word found by its key): texts of whole function words, their cases and
// near misses, long words, non-ASCII letters and invalid bytes.
func TestContentTermsAsFieldsFunc(t *testing.T) {
	var words []string
	for w := range retrieve.FunctionWords {
		words = append(words, w, strings.ToUpper(w), w+"s", w[:len(w)-1], "x"+w)
	}
	words = append(words, " ", ".", "'", "7", "é", "É", "İ", "Σ", "ß", "\xff", "\u00a0", "straße", "Supercalifragilistic", "abcdefgh", "abcdefghijklmnopq")
	slices.Sort(words) // map order is random: the texts are the same at every run
	r := rand.New(rand.NewPCG(41, 42))
	texts := []string{"", "a", "the", "The cat", "x\xffthe\xffy", "further furthers"}
	for range 20000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(words[r.IntN(len(words))])
			if r.IntN(3) > 0 {
				b.WriteString(" ")
			}
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		want := refContentTerms(text)
		if got := retrieve.ContentTerms(text); !slices.Equal(got, want) {
			t.Fatalf("%q: ContentTerms %q, want %q", text, got, want)
		}
		keys := make([]uint64, len(want))
		for i, term := range want {
			if keys[i] = retrieve.TermKey(term); keys[i] == 0 {
				keys = nil
				break
			}
		}
		if got := retrieve.ContentKeys(text); !slices.Equal(got, keys) || (got == nil) != (keys == nil) {
			t.Fatalf("%q: keys %v, want %v", text, got, keys)
		}
	}
}

// refContentWords is contentWords as first written: strings.FieldsFunc
// of the lower-cased text at every rune that is no letter or apostrophe.
func refContentWords(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		f = strings.Trim(f, "'")
		if i := strings.IndexByte(f, '\''); i > 0 {
			f = f[:i]
		}
		if len(f) < 3 || retrieve.StopWords[f] {
			continue
		}
		out = append(out, f)
	}
	return out
}

// contentWords splits an ASCII text by bytes as the reference does by
// runes: synthetic records, stop words in both cases, apostrophes,
// digits, and texts beyond ASCII (split by runes).
func TestContentWordsAsFieldsFunc(t *testing.T) {
	texts := []string{"", "'", "''abc''", "Melanie's I'm 'quoted' o'neil's", "The THE the'", "naïve Café", "a\xffbcd efg"}
	for _, in := range synth.New(synth.Options{Seed: 15, Records: 2000}).Next(2000) {
		texts = append(texts, in.Text)
	}
	pieces := []string{"about", "ABOUT", "melanie", "Melanie's", "'", "''", " ", ".", ",", "7", "x", "ab", "abc", "don't", "é", "É", "\xff", "İ", "-", "\t"}
	r := rand.New(rand.NewPCG(61, 62))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(10) {
			b.WriteString(pieces[r.IntN(len(pieces))])
			if r.IntN(2) == 0 {
				b.WriteByte(' ')
			}
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		if got, want := retrieve.ContentWords(text), refContentWords(text); !slices.Equal(got, want) {
			t.Fatalf("%q: content words %q, want %q", text, got, want)
		}
	}
}
