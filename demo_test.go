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
		ins := demoInputs(t)
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

// demoQuestions reads the questions `make run` asks from the Makefile's
// run target, so the test follows the demo.
func demoQuestions(t *testing.T) []string {
	t.Helper()
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mk), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "@for q in ") {
			continue
		}
		list := strings.TrimPrefix(line, "@for q in ")
		list = list[:strings.Index(list, "; do")]
		var qs []string
		for _, f := range strings.Split(list, `"`) {
			if f = strings.TrimSpace(f); f != "" {
				qs = append(qs, f)
			}
		}
		return qs
	}
	t.Fatal("Makefile: no `@for q in` line in the run target")
	return nil
}

// TestDemoFactsFirst is issue 12's "on make run's demo every question's
// fact-stating turn is first", in both recall modes. The fact-stating
// turn is the one whose own words state what the question asks; a reply
// that restates the turn it answers is derivative of it, whoever speaks.
// Before the reply stage the assistant's echo ranked first for the cat
// ("Cats often need a couple of weeks. Give Pixel a quiet corner" over
// "My cat Pixel") and for the allergy ("Noted: no shellfish" over "I'm
// allergic to shellfish"). For "marathon training long run" the turn
// that states the long run is the plan agreed after the user's "Sundays
// work": "long run Sunday" (turn 22, said by the assistant, and not an
// echo: the turn it answers holds none of the query's words). The user's
// "The marathon training is going well, I ran 21 km last Sunday" reports
// one run; "I signed up for the Porto marathon" states no run at all.
func TestDemoFactsFirst(t *testing.T) {
	facts := map[string]string{
		"what is the name of the cat":  "My cat Pixel hates the new flat",
		"food allergy":                 "allergic to shellfish",
		"when is the sister's wedding": "My sister Lena is getting married",
		"marathon training long run":   "long run Sunday",
		"which tool replaces Airflow":  "migrating the pipelines from Airflow to Dagster",
	}
	qs := demoQuestions(t)
	for _, q := range qs {
		if _, ok := facts[q]; !ok {
			t.Fatalf("make run asks %q: the test names no fact for it", q)
		}
	}
	ins := demoInputs(t)
	for _, mode := range []engine.Mode{engine.ModeFlat, engine.ModeTiered} {
		e, err := hmo.Open(t.TempDir(), &engine.Options{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Remember(context.Background(), ins...); err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			res, err := e.Recall(context.Background(), engine.Query{Text: q, K: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(res) == 0 || !strings.Contains(res[0].Record.Text, facts[q]) {
				var got []string
				for _, r := range res {
					got = append(got, r.Record.Role+": "+r.Record.Text)
				}
				t.Errorf("%s %q: top 3 %q, want %q first", mode, q, got, facts[q])
			}
		}
		e.Close()
	}
}

// demoInputs reads make run's conversation.
func demoInputs(t *testing.T) []engine.Input {
	t.Helper()
	f, err := os.Open("testdata/conversation.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ins []engine.Input
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var in engine.Input
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ins
}
