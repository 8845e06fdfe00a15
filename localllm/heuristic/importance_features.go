package heuristic

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Feature is one feature group of the heuristic importance scorer.
type Feature int

// The feature groups, along the rubric of the HMO paper's Appendix A. Each
// is counted over the sentences of a text that are not phatic, capped, and
// weighted; see featureTable for the weights and caps.
const (
	// FeatureIdentity counts first-person statements of identity and
	// facts: "I am", "I was", "I work", "I live", "I have", and "my X"
	// ("my sister", "my job"). "I'm so glad" does not count.
	FeatureIdentity Feature = iota
	// FeaturePreference counts preferences: love, enjoy, prefer, hate,
	// favourite, fan, hobby, and "like" after a subject pronoun. A
	// reaction to the previous turn ("love it!", "I like that") does not
	// count.
	FeaturePreference
	// FeatureConstraint counts constraints: diet and health (allergic,
	// vegan, gluten), deadlines and requirements count 1; habits and modal
	// constraints (never, always, must, can't, have to, need) count 1/2,
	// and only after a first-person subject ("I never eat meat", not
	// "never give up"). "Can't wait" does not count.
	FeatureConstraint
	// FeaturePlan counts decisions, plans and long-lived goals: plan words
	// (decided, plan, goal, dream, signed up, applied, career) in a
	// sentence with a first-person subject, and "I will", "I'm going to",
	// "we want", "I hope" unless they address the listener ("I hope you").
	FeaturePlan
	// FeatureEvent counts events and milestones: event verbs (went,
	// started, finished, bought, visited, adopted, moved, ...), other
	// regular past tenses of five letters or more, and event nouns
	// (wedding, birthday, trip, concert, class, ...).
	FeatureEvent
	// FeatureEntity counts named entities: capitalised words that are not
	// first in their sentence, not "I", not function words or filler, not
	// a name used to address the listener ("Thanks, Mel!", "Hi Jo"); and
	// acronyms ("LGBTQ") anywhere.
	FeatureEntity
	// FeatureTime counts dates, times and numbers: tokens with digits,
	// number words, months, weekdays, yesterday/tomorrow/ago, seasons, and
	// "last/next/this week".
	FeatureTime
	// FeatureDensity is ln(1+n), n the content words of the text: words of
	// three letters or more (or with a digit) that are neither function
	// words nor filler.
	FeatureDensity
	// FeaturePhatic is the share of the text's words that sit in phatic
	// sentences: greetings, thanks, reactions and filler, sentences with no
	// content word ("Wow, that's great!", "Thanks, Mel!", "Me too."). A
	// greeting before a long statement thus weighs little. Its weight is
	// negative.
	FeaturePhatic
	// FeatureQuestion is the share of the text's words that sit in
	// questions. Its weight is negative.
	FeatureQuestion
	// FeatureProfile counts the distinct content words of the text that
	// the persona profile holds (ImportanceWithProfile only).
	FeatureProfile

	numFeatures
)

// featureTable gives each feature group its name, default weight (points
// of the linear score per unit of value) and cap (the most value that
// counts). The weights are priors read off the rubric, not fitted: a
// critical constraint or a fact with a date lifts a short statement from
// "informative" (4-6) to "pivotal" (9-10); a greeting sits near 1. The
// doc of Heuristic repeats this table: keep the two in step.
var featureTable = [numFeatures]struct {
	name        string
	weight, cap float64
}{
	FeatureIdentity:   {"identity", 0.8, 3},
	FeaturePreference: {"preference", 1.2, 2},
	FeatureConstraint: {"constraint", 2.0, 2},
	FeaturePlan:       {"plan", 0.8, 2},
	FeatureEvent:      {"event", 0.6, 3},
	FeatureEntity:     {"entity", 0.5, 3},
	FeatureTime:       {"time", 0.6, 3},
	FeatureDensity:    {"density", 1.0, math.Inf(1)},
	FeaturePhatic:     {"phatic", -3.0, 1},
	FeatureQuestion:   {"question", -2.0, 1},
	FeatureProfile:    {"profile", 0.5, 3},
}

// heuristicBias is the linear score of a text with no feature: I0 =
// 1 + 9·σ(bias + Σ weight·value). A statement of a dozen content words and
// nothing else scores about 4.5.
const heuristicBias = -3.0

// modalShare is what a weak constraint (never, always, must, can't, have
// to) counts against a strong one (allergic, vegan, deadline).
const modalShare = 0.5

// String returns the feature group's name, e.g. "identity".
func (f Feature) String() string {
	if f < 0 || f >= numFeatures {
		return "feature(" + strconv.Itoa(int(f)) + ")"
	}
	return featureTable[f].name
}

// Features lists every feature group in order.
func Features() []Feature {
	fs := make([]Feature, numFeatures)
	for i := range fs {
		fs[i] = Feature(i)
	}
	return fs
}

// DefaultWeight is the feature group's default weight: the points it adds
// to the linear score per unit of value.
func (f Feature) DefaultWeight() float64 {
	if f < 0 || f >= numFeatures {
		return 0
	}
	return featureTable[f].weight
}

// featureVec holds one value per feature group.
type featureVec [numFeatures]float64

// textFeatures computes the uncapped feature values of a lexed text.
// profile, when not nil, holds the persona's content words.
func textFeatures(lx *hLexer, profile map[string]bool) featureVec {
	var v featureVec
	var content, phatic, questions, ntok float64
	var seen map[string]bool
	if profile != nil {
		seen = map[string]bool{}
	}
	cls := make([]lexClass, len(lx.tokens))
	for i, t := range lx.tokens {
		cls[i] = classify(t.word)
	}
	for _, s := range lx.sents {
		if s.question {
			questions += float64(s.tok1 - s.tok0)
		}
		sv, n := sentenceFeatures(lx.tokens[s.tok0:s.tok1], cls[s.tok0:s.tok1], profile, seen)
		ntok += float64(s.tok1 - s.tok0)
		if n == 0 {
			phatic += float64(s.tok1 - s.tok0)
			continue
		}
		content += float64(n)
		for f := range FeatureDensity { // the counted groups come first
			v[f] += sv[f]
		}
		v[FeatureProfile] += sv[FeatureProfile]
	}
	if len(lx.sents) > 0 {
		v[FeatureDensity] = math.Log1p(content)
		v[FeaturePhatic] = phatic / ntok
		v[FeatureQuestion] = questions / ntok
	}
	return v
}

// sentenceFeatures counts the features of one sentence, given the classes
// of its tokens, and its content words; a sentence with none is phatic and
// its counts are ignored. It may change cls (markReactions).
func sentenceFeatures(ts []hToken, cls []lexClass, profile, seen map[string]bool) (featureVec, int) {
	markReactions(ts, cls)
	var v featureVec
	content := 0
	self := false // a first-person subject came before token i
	for i, t := range ts {
		c := cls[i]
		entity := isEntity(ts, cls, i)
		if entity {
			v[FeatureEntity]++
		}
		if c&(lexStop|lexPhatic) == 0 && (t.numeric || utf8.RuneCountInString(t.word) >= 3) && !isVocative(ts, cls, i) {
			content++
			if profile[t.word] && !seen[t.word] {
				seen[t.word] = true
				v[FeatureProfile]++
			}
		}
		v[FeatureIdentity] += identityAt(ts, cls, i)
		v[FeaturePreference] += preferenceAt(cls, i)
		v[FeatureConstraint] += constraintAt(ts, cls, i, self)
		v[FeaturePlan] += planAt(ts, cls, i, self)
		v[FeatureEvent] += eventAt(t, c)
		v[FeatureTime] += timeAt(ts, cls, i)
		self = self || c&lexSelf != 0
	}
	return v, content
}

// classify returns the classes of a lowercase word. Elongated words
// ("sooo", "awww") are looked up with their runs shortened, and laughter
// ("hahaha", "hehe") is phatic.
func classify(w string) lexClass {
	if c, ok := lexClasses[w]; ok {
		return c
	}
	if isLaughter(w) {
		return lexPhatic
	}
	if short := squeeze(w); short != w {
		return lexClasses[short]
	}
	return 0
}

// isLaughter reports whether w, of four letters or more, is "ha", "he" or
// "lo" repeated, with an optional trailing h or l ("hahah", "lolol").
func isLaughter(w string) bool {
	if len(w) < 4 {
		return false
	}
	for _, unit := range [...]string{"ha", "he", "lo"} {
		i := 0
		for i+2 <= len(w) && w[i:i+2] == unit {
			i += 2
		}
		if i == len(w) || i == len(w)-1 && w[i] == unit[0] {
			return true
		}
	}
	return false
}

// squeeze shortens every run of three or more equal bytes to one ("sooo"
// → "so", "awww" → "aw").
func squeeze(w string) string {
	var b []byte
	for i := 0; i < len(w); {
		j := i
		for j < len(w) && w[j] == w[i] {
			j++
		}
		if j-i >= 3 && b == nil {
			b = append(make([]byte, 0, len(w)), w[:i]...)
		}
		switch {
		case b == nil:
		case j-i >= 3:
			b = append(b, w[i])
		default:
			b = append(b, w[i:j]...)
		}
		i = j
	}
	if b == nil {
		return w
	}
	return string(b)
}

// markReactions makes a preference that only reacts to the previous turn
// phatic: "love it!", "I like that." (a preference word followed by an
// anaphor that ends the sentence, possibly after "so much").
func markReactions(ts []hToken, cls []lexClass) {
	for i := range ts {
		if cls[i]&(lexPreference|lexLike) == 0 || i+1 >= len(ts) || cls[i+1]&lexAnaphor == 0 {
			continue
		}
		rest := i + 2
		for rest < len(ts) && cls[rest]&lexStop != 0 {
			rest++
		}
		if rest == len(ts) {
			cls[i] = lexPhatic
		}
	}
}

// isVocative reports whether the capitalised token i addresses the
// listener: it follows a greeting or thanks ("Hi Jo", "Thanks, Mel"), or a
// comma and ends its sentence or clause ("Agreed, Caroline.").
func isVocative(ts []hToken, cls []lexClass, i int) bool {
	if !ts[i].capital {
		return false
	}
	if i > 0 && cls[i-1]&lexPhatic != 0 {
		return true
	}
	return ts[i].comma && (i+1 == len(ts) || ts[i+1].comma)
}

// isEntity reports whether token i is a named entity.
func isEntity(ts []hToken, cls []lexClass, i int) bool {
	t := ts[i]
	if cls[i]&(lexStop|lexPhatic|lexMonth|lexTime) != 0 || t.numeric {
		return false
	}
	if t.allCaps {
		return true
	}
	return t.capital && !t.first && !isVocative(ts, cls, i)
}

// skip returns the first index from j on whose token is not in class c,
// skipping at most n tokens.
func skip(cls []lexClass, j int, c lexClass, n int) int {
	for ; n > 0 && j < len(cls) && cls[j]&c != 0; n-- {
		j++
	}
	return j
}

// identityAt scores a first-person statement of identity or fact starting
// at token i: "I (also) work", "I am a nurse", "my sister".
func identityAt(ts []hToken, cls []lexClass, i int) float64 {
	switch {
	case cls[i]&lexSelf != 0:
		j := skip(cls, i+1, lexAdverb, 1)
		if j >= len(ts) || cls[j]&lexState == 0 {
			return 0
		}
		if w := ts[j].word; w == "am" || w == "was" {
			k := skip(cls, j+1, lexAdverb|lexStop, 2)
			if k < len(ts) && cls[k]&lexPhatic != 0 {
				return 0 // "I'm so glad"
			}
		}
		return 1
	case cls[i]&lexPossessive != 0:
		for j := i + 1; j < len(ts) && j <= i+2; j++ {
			if cls[j]&(lexStop|lexPhatic) == 0 {
				return 1
			}
		}
	}
	return 0
}

// preferenceAt scores a preference word at token i; "like" counts after a
// subject pronoun ("I (really) like").
func preferenceAt(cls []lexClass, i int) float64 {
	switch {
	case cls[i]&lexPreference != 0:
		return 1
	case cls[i]&lexLike != 0:
		j := i - 1
		if j > 0 && cls[j]&lexAdverb != 0 {
			j--
		}
		if j >= 0 && cls[j]&lexPronoun != 0 {
			return 1
		}
	}
	return 0
}

// constraintAt scores a constraint at token i: a strong constraint word
// counts 1; a modal ("never", "must", "can't", "have to") counts
// modalShare, and only after a first-person subject in the same sentence
// ("I never eat meat", not "you must be proud" or "never give up").
func constraintAt(ts []hToken, cls []lexClass, i int, self bool) float64 {
	switch w := ts[i].word; {
	case cls[i]&lexConstraint != 0:
		return 1
	case !self:
		return 0
	case cls[i]&lexModal != 0:
		if w == "cannot" && i+1 < len(ts) && cls[i+1]&lexIdiom != 0 {
			return 0
		}
		return modalShare
	case w == "can" && i+1 < len(ts) && ts[i+1].word == "not":
		if i+2 < len(ts) && cls[i+2]&lexIdiom != 0 {
			return 0 // "can't wait"
		}
		return modalShare
	case (w == "have" || w == "has" || w == "had") && i+1 < len(ts) && ts[i+1].word == "to":
		return modalShare
	}
	return 0
}

// planAt scores a decision, plan or goal at token i: a plan word in a
// sentence whose subject is first person (self), or an intent verb after a
// first-person subject ("I'll", "we're going to") that does not address
// the listener ("I hope you", "I'll tell you").
func planAt(ts []hToken, cls []lexClass, i int, self bool) float64 {
	if cls[i]&lexPlan != 0 {
		if self {
			return 1
		}
		return 0
	}
	if cls[i]&lexSelf == 0 {
		return 0
	}
	j := skip(cls, i+1, lexAdverb, 1)
	if j < len(ts) && (ts[j].word == "am" || ts[j].word == "are") {
		j = skip(cls, j+1, lexAdverb, 1)
	}
	if j >= len(ts) || cls[j]&lexIntent == 0 {
		return 0
	}
	for k := j + 1; k < len(ts) && k <= j+2; k++ {
		if ts[k].word == "you" {
			return 0 // "I hope you ...", "I'll tell you"
		}
	}
	return 1
}

// eventAt scores an event at a token: an event verb or noun, or another
// regular past tense of five letters or more ("volunteered").
func eventAt(t hToken, c lexClass) float64 {
	switch {
	case c&lexEvent != 0:
		return 1
	case c&(lexStop|lexPhatic) == 0 && !t.numeric && len(t.word) >= 5 && strings.HasSuffix(t.word, "ed"):
		return 1
	}
	return 0
}

// timeAt scores a date, time or number at token i.
func timeAt(ts []hToken, cls []lexClass, i int) float64 {
	t, c := ts[i], cls[i]
	switch {
	case t.numeric, c&(lexNumber|lexTime) != 0:
		return 1
	case c&lexMonth != 0:
		if !ambiguousMonths[t.word] || t.capital && !t.first || nextToNumber(ts, i) {
			return 1
		}
	case c&lexPeriod != 0:
		if i > 0 && cls[i-1]&lexTimeRef != 0 {
			return 1
		}
	}
	return 0
}

func nextToNumber(ts []hToken, i int) bool {
	return i > 0 && ts[i-1].numeric || i+1 < len(ts) && ts[i+1].numeric
}
