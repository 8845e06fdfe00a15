package retrieve_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

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
