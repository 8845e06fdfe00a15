package heuristic_test

import (
	"math"
	"testing"
)

// FuzzImportance: any text, valid UTF-8 or not, gives a finite,
// deterministic importance in [1, 10], with or without a profile, and
// Explain agrees with Importance.
func FuzzImportance(f *testing.F) {
	for _, tc := range importanceCases {
		f.Add(tc.text)
	}
	for _, text := range []string{"\xff\xfe", "I'\xffm", "don't can't won't y'all o'clock", "Mr. J. R. R. Tolkien. e.g. 3.5 10:30 1,000", "hahahahaha sooooo", "ǅemal ﬁne ½ ² Ⅻ", "e\u0301te\u0301", "?!?!...…\n\n", "'''---"} {
		f.Add(text)
	}
	h := newHeuristic(f, nil)
	f.Fuzz(func(t *testing.T, text string) {
		got := h.Importance(text)
		if math.IsNaN(got) || got < 1 || got > 10 {
			t.Fatalf("Importance(%q) = %v, want in [1, 10]", text, got)
		}
		if again := h.Importance(text); again != got {
			t.Fatalf("Importance(%q) = %v then %v", text, got, again)
		}
		if i0, _ := h.Explain(text); i0 != got {
			t.Fatalf("Explain(%q) = %v, Importance %v", text, i0, got)
		}
		if p := h.ImportanceWithProfile(text, []string{text, "x"}); math.IsNaN(p) || p < got || p > 10 {
			t.Fatalf("ImportanceWithProfile(%q) = %v, want in [%v, 10]", text, p, got)
		}
	})
}
