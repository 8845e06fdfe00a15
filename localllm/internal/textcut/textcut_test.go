package textcut_test

import (
	"testing"

	"github.com/hmo-dev/hmo/localllm/internal/textcut"
)

func TestCutWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},                    // fits: unchanged
		{"hello world again", 12, "hello world…"}, // cut at the last word end that fits
		{"pi is 3.5 exactly", 8, "pi is…"},        // "3.5" is one word
		{"don't stop", 5, ""},                     // not even the first word fits
		{"don't stop", 7, "don't…"},               // "don't" is one word
		{"one, two three", 6, "one…"},             // trailing punctuation dropped
		{"été à Paris", 6, "été à…"},              // runes, not bytes
		{"well-known fact", 8, ""},                // a hyphen joins the word
	} {
		if got := textcut.CutWords(tc.in, tc.max); got != tc.want {
			t.Errorf("CutWords(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

func TestRunePredicates(t *testing.T) {
	for _, tc := range []struct {
		r               rune
		word, apostroph bool
	}{
		{'a', true, false}, {'Z', true, false}, {'7', true, false}, {'é', true, false},
		{'\'', false, true}, {'\u2019', false, true}, {'\u02bc', true, true}, // U+02BC is a modifier letter: both
		{'-', false, false}, {' ', false, false}, {'.', false, false},
	} {
		if got := textcut.IsWordRune(tc.r); got != tc.word {
			t.Errorf("IsWordRune(%q) = %v, want %v", tc.r, got, tc.word)
		}
		if got := textcut.IsApostrophe(tc.r); got != tc.apostroph {
			t.Errorf("IsApostrophe(%q) = %v, want %v", tc.r, got, tc.apostroph)
		}
	}
}
