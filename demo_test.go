package hmo_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
)

// TestDemoFindsAllergy is `make run`'s demo: the conversation in
// testdata, the embedded defaults, and the question "food allergy" must
// bring back the turn "I'm allergic to shellfish" in the top 3 that the
// demo prints, in both recall modes. (It did not before the retrieval
// pipeline: the stems "allergi" and "allerg" differ, and the turn lost to
// other food turns.)
func TestDemoFindsAllergy(t *testing.T) {
	for _, tc := range []struct {
		mode   engine.Mode
		stages string
	}{
		{engine.ModeTiered, ""},
		{engine.ModeFlat, ""},
		{engine.ModeFlat, "-prf"},
	} {
		e, err := hmo.Open(t.TempDir(), &engine.Options{Mode: tc.mode, Stages: tc.stages})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open("testdata/conversation.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		var ins []engine.Input
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var in engine.Input
			if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
				t.Fatal(err)
			}
			ins = append(ins, in)
		}
		f.Close()
		if _, err := e.Remember(context.Background(), ins...); err != nil {
			t.Fatal(err)
		}
		res, err := e.Recall(context.Background(), engine.Query{Text: "food allergy", K: 3})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range res {
			found = found || strings.Contains(r.Record.Text, "allergic to shellfish")
		}
		if !found {
			var got []string
			for _, r := range res {
				got = append(got, r.Record.Text)
			}
			t.Errorf("%s %q: top 3 %q miss the allergy", tc.mode, tc.stages, got)
		}
		e.Close()
	}
}
