package xmemory

import (
	"strings"
	"unicode"

	"github.com/hmo-dev/hmo/retrieve"
)

// MinFactTerms is the fewest content words (retrieve.ContentTerms) a
// sentence without a digit needs to be part of a message's fact.
const MinFactTerms = 2

// Fact is the offline semantic fact of a message: its sentences that
// state something, without the small talk around them ("Hey Mel!", "That's
// awesome!", "Thanks!"): a sentence stays when it has at least
// MinFactTerms content words or a digit. A message with no such sentence
// is its own fact. Whitespace runs become one space.
func Fact(text string) string {
	f, ok := fact(text)
	if !ok {
		return strings.Join(strings.Fields(text), " ")
	}
	return f
}

// StatedFact is Fact for a message that states something, and "" for
// one that is small talk only (no sentence Fact would keep).
func StatedFact(text string) string {
	f, _ := fact(text)
	return f
}

func fact(text string) (string, bool) {
	var kept []string
	for _, s := range sentences(text) {
		if len(retrieve.ContentTerms(s)) >= MinFactTerms || strings.ContainsFunc(s, unicode.IsDigit) {
			kept = append(kept, s)
		}
	}
	return strings.Join(kept, " "), len(kept) > 0
}

// sentences splits text after . ! or ? followed by white space, and at
// line breaks; each sentence has its white space runs collapsed.
func sentences(text string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, " "))
			cur = cur[:0]
		}
	}
	for _, line := range strings.Split(text, "\n") {
		for _, w := range strings.Fields(line) {
			cur = append(cur, w)
			if strings.ContainsAny(w[len(w)-1:], ".!?") && !abbreviation(w) {
				flush()
			}
		}
		flush()
	}
	return out
}

func abbreviation(w string) bool {
	switch strings.ToLower(strings.TrimRight(w, ".")) {
	case "e.g", "i.e", "etc", "vs", "dr", "mr", "mrs", "ms", "st":
		return true
	}
	return false
}
