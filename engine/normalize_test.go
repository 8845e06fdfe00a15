package engine_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/hmo-dev/hmo/engine"
)

// TestNormalizeTextIsNFKCFields: NormalizeText is Unicode NFKC, lower
// case, and strings.Fields joined by one space, for ASCII texts (which it
// normalises without NFKC) and others alike.
func TestNormalizeTextIsNFKCFields(t *testing.T) {
	ref := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(norm.NFKC.String(s))), " ") }
	cases := []string{
		"", " ", "a", "A", "already normal text", "Upper Case", " leading", "trailing ", "two  spaces",
		"tab\there", "new\nline", "\v\f\r mixed \t\n", "x\x00y", "\x1f\x7f", "ÉTÉ  Café", "ﬁne ligature", "a\u00a0b", "a\u0085b",
		"Ⅻ roman", "full　width",
	}
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []byte("aZ \t\n\v\f\r.,'-09\x00\x7f")
	for range 2000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := engine.NormalizeText(s), ref(s); got != want {
			t.Errorf("NormalizeText(%q) = %q, want %q", s, got, want)
		}
	}
}
