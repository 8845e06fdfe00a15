package retrieve_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/hmo-dev/hmo/retrieve"
)

// refWords is Words as first written: the reference the faster split is
// held to.
func refWords(text string) []retrieve.Word {
	var out []retrieve.Word
	for _, f := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’' && r != '-'
	}) {
		f = strings.Trim(f, "'’-")
		for _, suf := range []string{"'s", "’s", "'", "’"} {
			if strings.HasSuffix(strings.ToLower(f), suf) {
				f = f[:len(f)-len(suf)]
				break
			}
		}
		if f == "" {
			continue
		}
		r := []rune(f)
		out = append(out, retrieve.Word{Lower: strings.ToLower(f), Capital: unicode.IsUpper(r[0])})
	}
	return out
}

func TestWordsAsReference(t *testing.T) {
	pieces := []string{"Melanie's", "JAMES'", "James’", "O'Brien’s", "'S", "’S", "'s", "s'", "--", "-", "'", "’",
		"İstanbul's", "ẞtraße", "Ǆemal's", "2024", "v1.2", "e-mail", "don't", "É", "é", "\xff", "a\xffb", "\xe2\x80",
		" ", "  ", ",", ".", "?", "\n", "Caroline", "LGBTQ+", "x", "ΣΑΣ'S", "ﬁre", "K", "K's"}
	r := rand.New(rand.NewPCG(3, 4))
	texts := []string{"", " ", "'s", "Melanie's and James' dog"}
	for range 5000 {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
			if r.IntN(3) == 0 {
				b.WriteByte(' ')
			}
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		if got, want := retrieve.Words(text), refWords(text); !slices.Equal(got, want) {
			t.Fatalf("Words(%q) = %v, want %v", text, got, want)
		}
	}
}
