package ollama_test

import (
	"errors"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/localllm/ollama"
)

func TestParseFacts(t *testing.T) {
	text := "We decided on Postgres 16. The schema is in db/schema.sql."
	tests := []struct {
		name  string
		facts []ollama.StepFact
		n     int
		bad   bool
	}{
		{"good", []ollama.StepFact{{"Decision", " The database is  Postgres 16. "}, {"file", "The schema is in db/schema.sql."}}, 2, false},
		{"none", nil, 0, false},
		{"unknown kind", []ollama.StepFact{{"opinion", "x"}}, 0, true},
		{"empty text", []ollama.StepFact{{"decision", "  "}}, 0, true},
		{"longer than the turn", []ollama.StepFact{{"decision", text + text}}, 0, true},
	}
	for _, tt := range tests {
		got, err := ollama.ParseFacts(tt.facts, text)
		if tt.bad != (err != nil) || (err != nil && !errors.Is(err, engine.ErrModelOutput)) || len(got) != tt.n {
			t.Errorf("%s: %v, %v", tt.name, got, err)
		}
	}
	if got, _ := ollama.ParseFacts([]ollama.StepFact{{"decision", " The database is  Postgres 16. "}}, text); got[0].Kind != "decision" || got[0].Text != "The database is Postgres 16." {
		t.Errorf("not normalised: %+v", got)
	}
}
