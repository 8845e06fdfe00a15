package ollama

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hmo-dev/hmo/engine"
)

// Fact kinds the facts step distils (the same as package capture's).
var FactKinds = []string{"decision", "preference", "constraint", "name", "file", "command"}

// MaxFacts is the most facts the step keeps from one turn.
const MaxFacts = 8

// StepFact is one fact the model distilled from a turn.
type StepFact struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

const factsSystem = `You distil the lasting facts of one turn of a conversation between a user and a coding agent, for the agent's long-term memory.
Keep only decisions, preferences, constraints, names (of people, projects, services), files and commands that will matter in later sessions.
Each fact is one short self-contained sentence that keeps names, numbers, paths and commands exactly. Do not invent anything; no fact is a fine answer.
Answer with JSON only: {"facts": [{"kind": "decision" | "preference" | "constraint" | "name" | "file" | "command", "text": "..."}]}.`

var factsSchema = []byte(`{"type":"object","properties":{"facts":{"type":"array","items":{"type":"object","properties":{"kind":{"type":"string","enum":["decision","preference","constraint","name","file","command"]},"text":{"type":"string"}},"required":["kind","text"]}}},"required":["facts"]}`)

// Facts distils the facts of one turn's text with the chat model. The
// answer must be JSON {"facts": [{"kind", "text"}]}; kinds outside
// FactKinds, empty or invalid texts and texts longer than the turn fail
// the step (the caller falls back to the offline distiller); at most
// MaxFacts are kept.
func (s *Steps) Facts(ctx context.Context, text string) ([]StepFact, error) {
	var ans struct {
		Facts []StepFact `json:"facts"`
	}
	if err := s.chat(ctx, "facts", factsSystem, s.cut(text), factsSchema, &ans); err != nil {
		return nil, err
	}
	return ParseFacts(ans.Facts, text)
}

// ParseFacts validates the facts a model distilled from text.
func ParseFacts(facts []StepFact, text string) ([]StepFact, error) {
	var out []StepFact
	for _, f := range facts {
		kind := strings.ToLower(strings.TrimSpace(f.Kind))
		t := strings.Join(strings.Fields(f.Text), " ")
		switch {
		case !contains(FactKinds, kind):
			return nil, fmt.Errorf("%w: facts: kind %q", engine.ErrModelOutput, f.Kind)
		case t == "" || !utf8.ValidString(t) || strings.ContainsRune(t, utf8.RuneError):
			return nil, fmt.Errorf("%w: facts: empty or invalid text", engine.ErrModelOutput)
		case len(t) > len(text)+32:
			return nil, fmt.Errorf("%w: facts: a fact longer than its turn", engine.ErrModelOutput)
		}
		if len(out) < MaxFacts {
			out = append(out, StepFact{Kind: kind, Text: t})
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
