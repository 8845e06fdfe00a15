// Package capture decides what of an agent session is worth remembering:
// which turns to keep (Keep) and which facts a kept turn states (Distill),
// without a language model. An LLM distiller may replace Distill when a
// chat model is configured (see Distiller); Distill is its fallback.
//
// The keep rule drops turns that carry no information of their own:
// acknowledgements ("done", "ok thanks", "lgtm") and bare instructions to
// the agent ("check memory", "run the tests"). It is measured, not a word
// list: the heuristic importance scorer of package heuristic counts the
// text's content words (words left after stop words and phatic words) and
// its informative features (identity, preference, constraint, plan,
// event, named entity, time). A turn is dropped when it has no content
// word and no question, or when it is one short sentence (at most
// MaxIdleWords words) with at most MaxIdleContentWords content words, no
// informative feature, no file or command and no question. Questions stay: they are searchable, and the
// retrieval ranks them below the statements that answer them.
package capture

import (
	"context"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hmo-dev/hmo/localllm/heuristic"
	"github.com/hmo-dev/hmo/localllm/ollama"
)

// MaxIdleContentWords is the most content words a turn with no
// informative feature and no question may have and still be dropped.
const MaxIdleContentWords = 2

// MaxIdleWords is the most words, all told, such a turn may have: the
// rule is for short turns of one sentence.
const MaxIdleWords = 6

// Reasons a turn is dropped (Verdict.Reason).
const (
	ReasonEmpty           = "empty"
	ReasonAcknowledgement = "acknowledgement" // no content word: ok, thanks, done
	ReasonIdle            = "idle"            // a short instruction with nothing to remember
)

// Verdict is Keep's decision on one turn.
type Verdict struct {
	Keep         bool
	Reason       string  // why it is dropped; empty when kept
	ContentWords int     // words after stop and phatic words
	Importance   float64 // heuristic I0 on [1, 10]
}

// Capture applies the keep rule and the offline distiller. It is safe for
// concurrent use.
type Capture struct {
	h *heuristic.Heuristic
}

// New returns a Capture with the heuristic scorer's default weights.
func New() *Capture {
	h, _ := heuristic.New(nil) // nil options cannot fail
	return &Capture{h: h}
}

// Keep decides whether a turn's text is worth a memory.
func (c *Capture) Keep(text string) Verdict {
	if strings.TrimSpace(text) == "" {
		return Verdict{Reason: ReasonEmpty, Importance: 1}
	}
	i0, parts := c.h.Explain(text)
	v := Verdict{Keep: true, Importance: i0}
	informative, question := false, false
	for _, p := range parts {
		switch p.Feature {
		case heuristic.FeatureDensity:
			v.ContentWords = int(math.Round(math.Exp(p.Value) - 1))
		case heuristic.FeatureQuestion:
			question = p.Value > 0
		case heuristic.FeatureIdentity, heuristic.FeaturePreference, heuristic.FeatureConstraint,
			heuristic.FeaturePlan, heuristic.FeatureEvent, heuristic.FeatureEntity, heuristic.FeatureTime:
			informative = informative || p.Value > 0
		}
	}
	question = question || strings.Contains(text, "?")
	switch {
	case v.ContentWords == 0 && !question:
		v.Keep, v.Reason = false, ReasonAcknowledgement
	case v.ContentWords <= MaxIdleContentWords && !informative && !question && !hasArtifact(text) &&
		len(strings.Fields(text)) <= MaxIdleWords && len(Sentences(text)) == 1:
		v.Keep, v.Reason = false, ReasonIdle
	}
	return v
}

// Roles of the memories capture makes besides turns.
const (
	RoleFact    = "fact"    // a fact distilled from a turn
	RoleSummary = "summary" // a summary of a session (a compaction's)
)

// FactSources are the sources of a turn's n-th fact (from 1): the turn's
// label, which links the fact to its turn, and the label with "#f" and n,
// which tells the turn's facts apart.
func FactSources(turnSource string, n int) []string {
	return []string{turnSource, turnSource + "#f" + strconv.Itoa(n)}
}

// Fact kinds.
const (
	KindDecision   = "decision"
	KindPreference = "preference"
	KindConstraint = "constraint"
	KindName       = "name"
	KindFile       = "file"
	KindCommand    = "command"
)

// Fact is one statement distilled from a turn.
type Fact struct {
	Kind string // one of the Kind constants
	Text string // "Decision: ...", self-contained as far as the sentence is
}

var (
	reFile = regexp.MustCompile(`(?:~?/|\./)?(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.(?:go|py|ts|tsx|js|jsx|rs|rb|java|kt|c|h|cc|cpp|md|json|ya?ml|toml|sql|sh|csv|txt|proto|mod|lock|env|ini|cfg|html|css)\b`)
	// reCommand finds a command in backticks or after a shell prompt.
	reCommand    = regexp.MustCompile("`([^`\n]*\\s[^`\n]*)`|(?m)^\\s*\\$ (.+)$")
	reDecision   = regexp.MustCompile(`(?i)\b(decid\w*|chose|choose|chosen|going with|go with|switch(?:ed|ing)? (?:to|from)|migrat\w* (?:to|from)|we(?:'ll| will) use|let's use|settled on|instead of|not an? \w+|replac\w*)\b`)
	rePreference = regexp.MustCompile(`(?i)\b(prefer\w*|rather|i (?:like|love|hate|dislike)|favou?rite|please (?:always|never|use|keep))\b`)
	reConstraint = regexp.MustCompile(`(?i)\b(never|always|must|mustn't|must not|do not|don't|avoid|only|at most|at least|no more than|allergic|required?)\b`)
	reName       = regexp.MustCompile(`(?i)\b(called|named|codename|is the name)\b`)
)

func hasArtifact(text string) bool {
	return reFile.MatchString(text) || reCommand.MatchString(text)
}

// maxFactRunes bounds a fact's text; longer sentences are not facts.
const maxFactRunes = 400

// Distill returns the facts a turn's text states: its sentences that
// carry a decision, preference, constraint, name, file or command, each
// labelled with its kind. A turn of one sentence gives none (the turn is
// the fact), nor do questions.
func (c *Capture) Distill(text string) []Fact {
	sents := Sentences(text)
	if len(sents) < 2 {
		return nil
	}
	var out []Fact
	for _, s := range sents {
		if strings.HasSuffix(s, "?") || len([]rune(s)) > maxFactRunes {
			continue
		}
		kind := c.kindOf(s)
		if kind == "" {
			continue
		}
		out = append(out, Fact{Kind: kind, Text: label(kind) + ": " + s})
	}
	return out
}

func (c *Capture) kindOf(s string) string {
	_, parts := c.h.Explain(s)
	var f [heuristic.FeatureProfile + 1]float64
	for _, p := range parts {
		if int(p.Feature) < len(f) {
			f[p.Feature] = p.Value
		}
	}
	content := int(math.Round(math.Exp(f[heuristic.FeatureDensity]) - 1))
	switch {
	case content < 2:
		return ""
	case f[heuristic.FeaturePlan] > 0 || reDecision.MatchString(s):
		return KindDecision
	case f[heuristic.FeatureConstraint] > 0 || reConstraint.MatchString(s):
		return KindConstraint
	case f[heuristic.FeaturePreference] > 0 || rePreference.MatchString(s):
		return KindPreference
	case reName.MatchString(s):
		return KindName
	case reCommand.MatchString(s):
		return KindCommand
	case reFile.MatchString(s):
		return KindFile
	}
	return ""
}

func label(kind string) string { return strings.ToUpper(kind[:1]) + kind[1:] }

// reSentenceEnd ends a sentence: . ! or ? then space, or a line break.
var reSentenceEnd = regexp.MustCompile(`([.!?])\s+|\n+`)

// Sentences splits text into trimmed sentences. A period inside a word or
// a path (tides/csv.go, e.g.) does not end a sentence; list markers are
// removed.
func Sentences(text string) []string {
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(s), "-*•0123456789.) "))
		if s != "" {
			out = append(out, s)
		}
	}
	last := 0
	for _, m := range reSentenceEnd.FindAllStringSubmatchIndex(text, -1) {
		end := m[1]
		if m[2] >= 0 {
			end = m[3] // keep the punctuation
			if abbreviation(text[last:m[2]]) {
				continue
			}
		}
		add(text[last:end])
		last = m[1]
	}
	add(text[last:])
	return out
}

// abbreviation reports whether s ends with a short abbreviation (e.g, i.e,
// etc, vs) rather than a sentence.
func abbreviation(s string) bool {
	i := strings.LastIndexAny(s, " \t(")
	w := strings.ToLower(s[i+1:])
	switch w {
	case "e.g", "i.e", "etc", "vs", "cf", "approx", "no", "dr", "mr", "mrs", "ms":
		return true
	}
	return false
}

// Distiller distils the facts of a turn's text. *Capture is the offline
// one; LLM asks a chat model and falls back to it.
type Distiller interface {
	DistillFacts(ctx context.Context, text string) ([]Fact, error)
}

// DistillFacts is Distill as a Distiller: it never fails.
func (c *Capture) DistillFacts(_ context.Context, text string) ([]Fact, error) {
	return c.Distill(text), nil
}

// FactStep is a language model's facts step (ollama.Steps).
type FactStep interface {
	Facts(ctx context.Context, text string) ([]ollama.StepFact, error)
}

// DefaultLLMTimeout bounds one facts call of LLM.
const DefaultLLMTimeout = time.Second

// LLM distils facts with a chat model when one is configured: the same
// turns as Distill (two sentences or more), the model's facts labelled by
// kind. When the model fails or takes longer than Timeout (default
// DefaultLLMTimeout) it falls back to Fallback, the offline distiller,
// and counts the fallback. It is safe for concurrent use if Step is.
type LLM struct {
	Step     FactStep
	Fallback *Capture
	Timeout  time.Duration

	fallbacks atomic.Int64
}

// DistillFacts implements Distiller.
func (l *LLM) DistillFacts(ctx context.Context, text string) ([]Fact, error) {
	if len(Sentences(text)) < 2 {
		return nil, nil // the turn is the fact
	}
	d := l.Timeout
	if d <= 0 {
		d = DefaultLLMTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	got, err := l.Step.Facts(cctx, text)
	if err != nil {
		l.fallbacks.Add(1)
		return l.Fallback.Distill(text), nil
	}
	out := make([]Fact, 0, len(got))
	for _, f := range got {
		out = append(out, Fact{Kind: f.Kind, Text: label(f.Kind) + ": " + f.Text})
	}
	return out, nil
}

// Fallbacks counts the calls answered by the offline distiller.
func (l *LLM) Fallbacks() int64 { return l.fallbacks.Load() }
