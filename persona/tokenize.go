package persona

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// stopWords are common English function words, contractions and chat
// filler that never make a salient term. Matched after lowercasing and
// after a possessive "'s" is removed.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a about above after again against all also am an and any are aren't as at
		be because been before being below between both but by
		can can't cannot could couldn't did didn't do does doesn't doing don't down during
		each even ever every few for from further get gets getting got gonna gotta
		had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers
		herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's
		its itself just know let's like lot lots made make makes many may maybe me might
		more most much must mustn't my myself no nor not now of off oh ok okay on once
		one only or other ought our ours ourselves out over own pretty quite really
		right same say said see seem seems shan't she she'd she'll she's should
		shouldn't since so some something still such sure than thank thanks that that's
		the their theirs them themselves then there there's these they they'd they'll
		they're they've thing things think this those though through to too totally
		under until up upon us very want wanna was wasn't way we we'd we'll we're we've
		well were weren't what what's when when's where where's whether which while who
		who's whom why why's will with won't would wouldn't wow yeah yes yet you you'd
		you'll you're you've your yours yourself yourselves hey hi hello
		cool great good nice awesome glad lol haha hmm yep nope also anyway going
		really actually definitely absolutely kind sort stuff time`) {
		m[w] = true
	}
	return m
}()

// terms calls fn with each salient term of text, lowercase, in order of
// first appearance, each once. A term is a run of letters, digits and
// inner apostrophes with at least one letter, MinTermRunes to
// MaxTermRunes characters long, not a stop word; a possessive "'s" is
// removed.
func terms(text string, fn func(string)) {
	seen := map[string]bool{}
	var b strings.Builder
	flush := func() {
		t := strings.Trim(b.String(), "'")
		b.Reset()
		t = strings.TrimSuffix(t, "'s")
		n := utf8.RuneCountInString(t)
		if n < MinTermRunes || n > MaxTermRunes || stopWords[t] || seen[t] || !strings.ContainsFunc(t, unicode.IsLetter) {
			return
		}
		seen[t] = true
		fn(t)
	}
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case (r == '\'' || r == '\u2019') && b.Len() > 0:
			b.WriteByte('\'')
		default:
			if b.Len() > 0 {
				flush()
			}
		}
	}
	if b.Len() > 0 {
		flush()
	}
}
