package fts

import (
	"encoding/json"
	"os"
	"testing"
)

// locomoTexts returns every turn's text in the LoCoMo development file
// beside the repository (../shared/data), for tests that compare two
// analyses over real conversational text; none when the file is not there
// (the tests then run on their own texts, and say so).
func locomoTexts(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../shared/data/locomo-dev.json")
	if err != nil {
		t.Logf("no LoCoMo texts (%v): the built-in texts only", err)
		return nil
	}
	var convs []struct {
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	if err := json.Unmarshal(b, &convs); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range convs {
		for _, raw := range c.Conversation {
			var turns []struct {
				Text string `json:"text"`
			}
			if json.Unmarshal(raw, &turns) == nil {
				for _, tu := range turns {
					texts = append(texts, tu.Text)
				}
			}
		}
	}
	return texts
}
