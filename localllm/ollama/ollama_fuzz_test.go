package ollama_test

import (
	"errors"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/localllm/ollama"
)

// FuzzModelAnswers feeds arbitrary model output to the answer parsers: they
// either accept a value in range or fail with engine.ErrModelOutput, and
// never panic.
func FuzzModelAnswers(f *testing.F) {
	for _, s := range []string{`{"score": 7}`, "```json\n{\"score\": 3}\n```", `{"score": 1e308}`, `{"kind":"core","summary":"x"}`, `{`, `nul`, `{"score": null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var ans struct {
			Score *float64 `json:"score"`
		}
		if err := ollama.DecodeAnswer(s, &ans); err != nil {
			if !errors.Is(err, engine.ErrModelOutput) {
				t.Fatalf("DecodeAnswer(%q) = %v, want ErrModelOutput", s, err)
			}
			return
		}
		v, err := ollama.ParseScore(ans.Score)
		if err == nil && (v < 1 || v > 10) {
			t.Fatalf("ParseScore accepted %v from %q", v, s)
		}
		var c struct {
			Kind    string `json:"kind"`
			Summary string `json:"summary"`
		}
		if ollama.DecodeAnswer(s, &c) == nil {
			if got, err := ollama.ParseCompressed(c.Kind, c.Summary, "a much longer original text than most summaries", 40); err == nil && (got.Summary == "" || len([]rune(got.Summary)) > 40) {
				t.Fatalf("ParseCompressed accepted %+v from %q", got, s)
			}
		}
	})
}
