package heuristic_test

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/hmo-dev/hmo/localllm/heuristic"
)

// newHeuristic returns a scorer or fails the test.
func newHeuristic(t testing.TB, opts *heuristic.Options) *heuristic.Heuristic {
	t.Helper()
	h, err := heuristic.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return h
}

// importanceCases place texts on the rubric of the HMO paper's Appendix A:
// 1-3 transient, 4-6 informative, 7-8 high utility, 9-10 pivotal.
var importanceCases = []struct {
	text     string
	min, max float64
}{
	{"", 1, 1},
	{"   \n\t ", 1, 1},
	{"!!! ... ???", 1, 1},
	{"🙂🎉", 1, 1},
	{"Hi!", 1, 3},
	{"Hello, how are you?", 1, 3},
	{"Hey Mel! Good to see you!", 1, 3},
	{"Thanks, Caroline!", 1, 3},
	{"haha nice", 1, 3},
	{"Hahaha sooo cool!!", 1, 3},
	{"Wow, that's great!", 1, 3},
	{"Love it!", 1, 3},
	{"I'm so glad!", 1, 3},
	{"Me too.", 1, 3},
	{"ok", 1, 3},
	{"You must be so proud!", 1, 3},
	{"Can you help me?", 1, 3},
	{"What did you do last weekend?", 1, 3},
	{"The weather is nice today.", 1, 4},
	{"I love hiking in the mountains.", 4, 7},
	{"I prefer dark mode in my editor.", 5, 9},
	{"I work as a nurse at St. Mary's hospital.", 5, 9},
	{"I went to a LGBTQ support group yesterday and it was so powerful.", 5, 9},
	{"I'm allergic to peanuts", 7, 10},
	{"I’m allergic to peanuts.", 7, 10},
	{"My sister's wedding is on 12 July in Lisbon", 8, 10},
	{"My name is Ana and I live in Porto.", 7, 10},
	{"I decided to quit my job and start a bakery.", 7, 10},
	{"We adopted a puppy named Max last month.", 7, 10},
	{"The deadline for the report is Friday.", 7, 10},
}

func TestImportanceExamples(t *testing.T) {
	h := newHeuristic(t, nil)
	for _, tc := range importanceCases {
		if got := h.Importance(tc.text); got < tc.min || got > tc.max {
			t.Errorf("Importance(%q) = %.2f, want in [%g, %g]", tc.text, got, tc.min, tc.max)
		}
	}
}

// TestImportanceOrder checks pairs that differ in one rubric dimension.
func TestImportanceOrder(t *testing.T) {
	h := newHeuristic(t, nil)
	tests := []struct{ higher, lower string }{
		{"I never eat meat.", "Never give up!"},
		{"I have to finish the report by Friday.", "You have to see it!"},
		{"I can't eat gluten.", "I can't wait!"},
		{"I love pottery.", "I love that!"},
		{"I'm going to apply for the nursing program.", "I hope you have a great time!"},
		{"Thanks! I adopted a cat named Luna last week.", "I adopted a cat."},
		{"Caroline moved to Berlin in 2021.", "Caroline moved."},
		{"We visited my grandmother in Sweden.", "We visited her."},
		{"I finished my first marathon in Boston.", "What did you finish?"},
		{"Thanks, Mel! I started a pottery class on Saturdays.", "Thanks, Mel! Thanks so much, that's great!"},
		{"The concert is on May 3.", "You may go to the concert."},
	}
	for _, tt := range tests {
		hi, lo := h.Importance(tt.higher), h.Importance(tt.lower)
		if hi <= lo {
			t.Errorf("Importance(%q) = %.2f, want above Importance(%q) = %.2f", tt.higher, hi, tt.lower, lo)
		}
	}
}

// TestExplainFeatures checks that each feature group fires on the
// construction it documents, and that Explain agrees with Importance.
func TestExplainFeatures(t *testing.T) {
	h := newHeuristic(t, nil)
	tests := []struct {
		text string
		on   []heuristic.Feature
		off  []heuristic.Feature
	}{
		{"I work at the bakery.", []heuristic.Feature{heuristic.FeatureIdentity}, nil},
		{"My brother is a pilot.", []heuristic.Feature{heuristic.FeatureIdentity}, nil},
		{"I'm so happy!", nil, []heuristic.Feature{heuristic.FeatureIdentity}},
		{"My favourite food is ramen.", []heuristic.Feature{heuristic.FeaturePreference}, nil},
		{"We really like board games.", []heuristic.Feature{heuristic.FeaturePreference}, nil},
		{"It looks like rain tonight.", nil, []heuristic.Feature{heuristic.FeaturePreference}},
		{"I'm vegetarian.", []heuristic.Feature{heuristic.FeatureConstraint}, nil},
		{"I always run before work.", []heuristic.Feature{heuristic.FeatureConstraint}, nil},
		{"Always look on the bright side.", nil, []heuristic.Feature{heuristic.FeatureConstraint}},
		{"I decided to sell the car.", []heuristic.Feature{heuristic.FeaturePlan}, nil},
		{"We're going to renovate the kitchen.", []heuristic.Feature{heuristic.FeaturePlan}, nil},
		{"I'll tell you later.", nil, []heuristic.Feature{heuristic.FeaturePlan}},
		{"She volunteered at the shelter.", []heuristic.Feature{heuristic.FeatureEvent}, nil},
		{"The wedding was lovely.", []heuristic.Feature{heuristic.FeatureEvent}, nil},
		{"We met Jon Snow at Winterfell.", []heuristic.Feature{heuristic.FeatureEntity}, nil},
		{"Agreed, Caroline.", nil, []heuristic.Feature{heuristic.FeatureEntity}},
		{"Hi Melanie, the garden looks good.", nil, []heuristic.Feature{heuristic.FeatureEntity}},
		{"The LGBTQ center opened.", []heuristic.Feature{heuristic.FeatureEntity}, nil},
		{"It starts at 10:30 on Monday.", []heuristic.Feature{heuristic.FeatureTime}, nil},
		{"We moved here three years ago.", []heuristic.Feature{heuristic.FeatureTime}, nil},
		{"Last summer was hot.", []heuristic.Feature{heuristic.FeatureTime}, nil},
		{"Thanks! See you.", []heuristic.Feature{heuristic.FeaturePhatic}, []heuristic.Feature{heuristic.FeatureDensity}},
		{"Where do you live?", []heuristic.Feature{heuristic.FeatureQuestion}, nil},
	}
	for _, tt := range tests {
		i0, parts := h.Explain(tt.text)
		if want := h.Importance(tt.text); i0 != want {
			t.Errorf("Explain(%q) = %v, Importance = %v", tt.text, i0, want)
		}
		if len(parts) != len(heuristic.Features()) {
			t.Fatalf("Explain(%q) gave %d parts, want %d", tt.text, len(parts), len(heuristic.Features()))
		}
		for _, f := range tt.on {
			if p := parts[f]; p.Feature != f || p.Value <= 0 {
				t.Errorf("Explain(%q): %s = %+v, want a positive value", tt.text, f, p)
			}
		}
		for _, f := range tt.off {
			if p := parts[f]; p.Value != 0 {
				t.Errorf("Explain(%q): %s = %+v, want 0", tt.text, f, p)
			}
		}
	}
}

func TestExplainPointsAreWeightTimesValue(t *testing.T) {
	h := newHeuristic(t, &heuristic.Options{Weights: map[heuristic.Feature]float64{heuristic.FeatureTime: 2}})
	_, parts := h.Explain("On 3 May 2024 I bought my first car, a red Fiat, in Milan.")
	for _, p := range parts {
		w := p.Feature.DefaultWeight()
		if p.Feature == heuristic.FeatureTime {
			w = 2
		}
		if p.Value < 0 || p.Points != w*p.Value {
			t.Errorf("%s: value %v points %v, want value ≥ 0 and points = %v × value", p.Feature, p.Value, p.Points, w)
		}
	}
	if parts[heuristic.FeatureTime].Value == 0 || parts[heuristic.FeatureEntity].Value == 0 {
		t.Errorf("time %v, entity %v: want both positive", parts[heuristic.FeatureTime].Value, parts[heuristic.FeatureEntity].Value)
	}
}

// TestImportanceCaps: repeating a fact does not raise its score without
// bound; capped features keep a long list of dates near the top.
func TestImportanceCaps(t *testing.T) {
	h := newHeuristic(t, nil)
	_, parts := h.Explain(strings.Repeat("I moved to Paris on 3 May 2020. ", 50))
	for _, f := range []heuristic.Feature{heuristic.FeatureIdentity, heuristic.FeatureEvent, heuristic.FeatureEntity, heuristic.FeatureTime} {
		if v := parts[f].Value; v > 3 {
			t.Errorf("%s value %v, want at most its cap 3", f, v)
		}
	}
}

func TestNewHeuristicOptions(t *testing.T) {
	bad := []map[heuristic.Feature]float64{
		{heuristic.Feature(-1): 1},
		{heuristic.Feature(99): 1},
		{heuristic.FeatureTime: math.NaN()},
		{heuristic.FeatureTime: math.Inf(1)},
	}
	for _, w := range bad {
		if _, err := heuristic.New(&heuristic.Options{Weights: w}); !errors.Is(err, heuristic.ErrOptions) {
			t.Errorf("New(Weights %v) error = %v, want ErrOptions", w, err)
		}
	}
	text := "My sister's wedding is on 12 July in Lisbon"
	def := newHeuristic(t, nil).Importance(text)
	if got := newHeuristic(t, &heuristic.Options{}).Importance(text); got != def {
		t.Errorf("zero options give %v, nil options %v", got, def)
	}
	off := newHeuristic(t, &heuristic.Options{Weights: map[heuristic.Feature]float64{heuristic.FeatureTime: 0}})
	if got := off.Importance(text); got >= def {
		t.Errorf("without time: %v, want below the default %v", got, def)
	}
	_, parts := off.Explain(text)
	if p := parts[heuristic.FeatureTime]; p.Value == 0 || p.Points != 0 {
		t.Errorf("time turned off: %+v, want a value and no points", p)
	}
}

func TestImportanceWithProfile(t *testing.T) {
	h := newHeuristic(t, nil)
	text := "We went sailing near the harbour."
	base := h.Importance(text)
	for _, profile := range [][]string{nil, {}, {"pottery", "Lisbon"}, {"the", "we"}} {
		if got := h.ImportanceWithProfile(text, profile); got != base {
			t.Errorf("ImportanceWithProfile(%q, %q) = %v, want %v (no shared content word)", text, profile, got, base)
		}
	}
	one := h.ImportanceWithProfile(text, []string{"loves Sailing"})
	two := h.ImportanceWithProfile(text, []string{"loves Sailing", "harbour life"})
	if !(base < one && one < two) {
		t.Errorf("profile scores %v, %v, %v: want increasing with shared words", base, one, two)
	}
	// A word repeated in the text counts once: the linear score moves by
	// one weight. I0 = 1 + 9σ(s), so s = ln((I0−1)/(10−I0)).
	logit := func(i0 float64) float64 { return math.Log((i0 - 1) / (10 - i0)) }
	rep := "We went sailing. Sailing, sailing, sailing!"
	shift := logit(h.ImportanceWithProfile(rep, []string{"sailing"})) - logit(h.Importance(rep))
	if w := heuristic.FeatureProfile.DefaultWeight(); math.Abs(shift-w) > 1e-9 {
		t.Errorf("profile word repeated 4 times moved the linear score by %v, want one weight %v", shift, w)
	}
}

func TestFeatureString(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range heuristic.Features() {
		s := f.String()
		if s == "" || seen[s] || strings.HasPrefix(s, "feature(") {
			t.Errorf("Feature(%d).String() = %q: empty, repeated or unnamed", int(f), s)
		}
		seen[s] = true
	}
	if got := heuristic.Feature(42).String(); got != "feature(42)" {
		t.Errorf("Feature(42).String() = %q, want feature(42)", got)
	}
	if heuristic.FeaturePhatic.DefaultWeight() >= 0 || heuristic.FeatureQuestion.DefaultWeight() >= 0 {
		t.Error("phatic and question weights should be negative")
	}
}

// TestImportanceConcurrent scores the same texts from several goroutines
// (run with -race) and expects the sequential results.
func TestImportanceConcurrent(t *testing.T) {
	h := newHeuristic(t, nil)
	want := make([]float64, len(importanceCases))
	for i, tc := range importanceCases {
		want[i] = h.Importance(tc.text)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(want))
	for range 8 {
		wg.Go(func() {
			for i, tc := range importanceCases {
				if got := h.Importance(tc.text); got != want[i] {
					errs <- tc.text
				}
				_ = heuristic.Summarize(tc.text, 10)
			}
		})
	}
	wg.Wait()
	close(errs)
	for text := range errs {
		t.Errorf("Importance(%q) differs under concurrency", text)
	}
}
