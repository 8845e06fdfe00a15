package localllm_test

import (
	"errors"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/localllm"
)

func TestParseFacts(t *testing.T) {
	text := "We decided on Postgres 16. The schema is in db/schema.sql."
	tests := []struct {
		name  string
		facts []localllm.StepFact
		n     int
		bad   bool
	}{
		{"good", []localllm.StepFact{{"Decision", " The database is  Postgres 16. "}, {"file", "The schema is in db/schema.sql."}}, 2, false},
		{"none", nil, 0, false},
		{"unknown kind", []localllm.StepFact{{"opinion", "x"}}, 0, true},
		{"empty text", []localllm.StepFact{{"decision", "  "}}, 0, true},
		{"longer than the turn", []localllm.StepFact{{"decision", text + text}}, 0, true},
	}
	for _, tt := range tests {
		got, err := localllm.ParseFacts(tt.facts, text)
		if tt.bad != (err != nil) || (err != nil && !errors.Is(err, engine.ErrModelOutput)) || len(got) != tt.n {
			t.Errorf("%s: %v, %v", tt.name, got, err)
		}
	}
	if got, _ := localllm.ParseFacts([]localllm.StepFact{{"decision", " The database is  Postgres 16. "}}, text); got[0].Kind != "decision" || got[0].Text != "The database is Postgres 16." {
		t.Errorf("not normalised: %+v", got)
	}
}
