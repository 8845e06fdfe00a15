package heuristic

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/hmo-dev/hmo/engine"
)

var _ engine.ImportanceScorer = (*Heuristic)(nil)

// Options configures a Heuristic scorer. The zero value gives the
// defaults.
type Options struct {
	// Weights overrides the weight of feature groups, in points of the
	// linear score per unit of the feature's value; 0 turns a group off. A
	// group absent from the map keeps its default, Feature.DefaultWeight.
	// Default nil: every group at its default.
	Weights map[Feature]float64
}

// Heuristic scores the initial importance I0 of a memory record without a
// language model, along the rubric of the HMO paper's Appendix A: who the
// user is (identity, preferences), what later reasoning depends on
// (constraints, decisions, dated facts and events) and what lasts (plans
// and goals) score high; greetings, thanks, reactions, filler and bare
// questions score low.
//
// The model is linear and small enough to read. A text is split into
// sentences and words; each feature group (see Feature) is counted over
// the sentences that carry a content word, capped, and weighted:
//
//	s  = bias + Σ weight(f) · min(value(f), cap(f))
//	I0 = 1 + 9 / (1 + exp(−s))
//
// with bias −3 and the default weights and caps
//
//	group       weight  cap  value
//	identity     +0.8    3   first-person facts ("I work", "my sister")
//	preference   +1.2    2   love, prefer, favourite, "I like"
//	constraint   +2.0    2   allergic, vegan, deadline; I never/must/can't: ½
//	plan         +0.8    2   decided, plan, goal; "I will", "I'm going to"
//	event        +0.6    3   went, bought, adopted, -ed verbs; wedding, trip
//	entity       +0.5    3   capitalised words inside a sentence, acronyms
//	time         +0.6    3   numbers, dates, months, weekdays, "last week"
//	density      +1.0    -   ln(1 + content words)
//	phatic       −3.0    1   share of words in greetings, thanks, reactions
//	question     −2.0    1   share of words in questions
//	profile      +0.5    3   content words shared with the persona profile
//
// so that a greeting scores about 1, a plain statement 3 to 6, a stated
// preference or a dated event 5 to 8, a critical constraint or a
// milestone with a name and a date 7 to 10 (see the examples in the
// tests).
//
// The logistic map keeps I0 inside [1, 10] without ties at the ends; a
// text without a word scores exactly 1. Scoring a message of a hundred
// characters takes about ten microseconds and six allocations.
//
// Heuristic is safe for concurrent use: it is immutable once built.
type Heuristic struct {
	weights featureVec
}

// Contribution is one feature group's share of a score.
type Contribution struct {
	Feature Feature
	Value   float64 // the group's value for the text, after its cap
	Points  float64 // Value times the weight: its share of the linear score
}

// New returns a heuristic importance scorer. A nil opts gives the
// defaults.
func New(opts *Options) (*Heuristic, error) {
	h := &Heuristic{weights: defaultWeights()}
	if opts == nil {
		return h, nil
	}
	for _, f := range slices.Sorted(maps.Keys(opts.Weights)) {
		w := opts.Weights[f]
		switch {
		case f < 0 || f >= numFeatures:
			return nil, fmt.Errorf("%w: unknown feature %d", ErrOptions, int(f))
		case math.IsNaN(w) || math.IsInf(w, 0):
			return nil, fmt.Errorf("%w: weight of %s is %g", ErrOptions, f, w)
		}
		h.weights[f] = w
	}
	return h, nil
}

// Importance returns the initial importance of a text, in [1, 10]. It
// implements the engine's importance scorer.
func (h *Heuristic) Importance(text string) float64 {
	i0, _ := h.score(text, nil)
	return i0
}

// ImportanceWithProfile is Importance with the persona's text profile:
// each distinct content word the text shares with profileTerms (words or
// phrases; FeatureProfile, up to 3) raises the score, as the paper's
// evaluator weighs alignment with the user persona.
func (h *Heuristic) ImportanceWithProfile(text string, profileTerms []string) float64 {
	i0, _ := h.score(text, profileWords(profileTerms))
	return i0
}

// Explain returns the importance of a text and the contribution of every
// feature group, in Feature order.
func (h *Heuristic) Explain(text string) (float64, []Contribution) {
	i0, v := h.score(text, nil)
	parts := make([]Contribution, numFeatures)
	for f := range numFeatures {
		parts[f] = Contribution{Feature: f, Value: v[f], Points: h.weights[f] * v[f]}
	}
	return i0, parts
}

// defaultWeights returns the default weight of every feature group.
func defaultWeights() featureVec {
	var w featureVec
	for f := range numFeatures {
		w[f] = featureTable[f].weight
	}
	return w
}

// score returns I0 and the capped feature values.
func (h *Heuristic) score(text string, profile map[string]bool) (float64, featureVec) {
	lx := lex(text)
	if len(lx.sents) == 0 {
		return 1, featureVec{}
	}
	v := textFeatures(lx, profile)
	s := heuristicBias
	for f := range numFeatures {
		v[f] = math.Min(v[f], featureTable[f].cap)
		s += h.weights[f] * v[f]
	}
	return squash(s), v
}

// squash maps a linear score to [1, 10].
func squash(s float64) float64 {
	i0 := 1 + 9/(1+math.Exp(-s))
	return math.Max(1, math.Min(10, i0))
}

// profileWords returns the set of content words of the profile terms.
func profileWords(terms []string) map[string]bool {
	words := map[string]bool{}
	for _, term := range terms {
		for _, t := range lex(term).tokens {
			if classify(t.word)&(lexStop|lexPhatic) == 0 {
				words[t.word] = true
			}
		}
	}
	return words
}
