package retrieve_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/retrieve"
)

// Doc.Analyse caches what the stages derive from a record's text; the
// pipeline must rank exactly as it does from the raw text.
func TestAnalysedDocsRankAlike(t *testing.T) {
	texts := []string{
		"I went camping with the kids last week, by the lake.",
		"Did you go camping? Where did you go?",
		"Wow, that sounds lovely. How are the kids?",
		"My sister's wedding is on 12 June 2023 in Tampa.",
		"I'm allergic to shellfish, so no shrimp for me!",
		"What are you painting these days? Is it the sunset?",
		"I painted a sunset over the lake yesterday. It took three hours.",
		"Yes. Yes. Yes?",
		"",
		"Caroline said the adoption agency called on Monday.",
		"Wir waren in München im Café, größer als 東京都の美術館?",
	}
	all, err := retrieve.ParseStages("default,+context,+wordsim,+temporal,+robust")
	if err != nil {
		t.Fatal(err)
	}
	// n records: the texts, repeated; from 32 candidates on the ranking
	// derives their time expressions on two goroutines.
	for _, n := range []int{len(texts), 70} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { analysedRankAlike(t, texts, n, all) })
	}
}

func analysedRankAlike(t *testing.T, texts []string, n int, all retrieve.Stages) {
	day := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	raw := map[uint64]retrieve.Doc{}
	analysed := map[uint64]retrieve.Doc{}
	var text, vec []retrieve.Hit
	for i := range n {
		id := uint64(i + 1)
		d := retrieve.Doc{ID: id, Prev: uint64(i), Scope: "s", Session: fmt.Sprint(i / 20), Speaker: []string{"Melanie", "Caroline"}[i%2],
			Time: day.Add(time.Duration(i) * time.Hour), Text: texts[i%len(texts)]}
		raw[id] = d
		d.Analyse()
		analysed[id] = d
		text = append(text, retrieve.Hit{ID: id, Score: float64(2*n - i), Coverage: float64(i%3) / 3})
		vec = append(vec, retrieve.Hit{ID: uint64(n - i), Score: 0.9 - 0.5*float64(i)/float64(n)})
	}
	for _, stages := range []retrieve.Stages{retrieve.DefaultStages, all} {
		for _, q := range []string{
			"When did Melanie go camping?",
			"What is Caroline painting?",
			"food allergy shellfish",
			"When is the sister's wedding in June 2023?",
			"What did Melanie and Caroline do last week?",
			"yes",
			"München Café größer 東京都の美術館",
		} {
			query := &retrieve.Query{Text: q, K: 5, Candidates: n, Now: day.AddDate(0, 0, 3), VectorNull: retrieve.Null{Mean: 0.2, SD: 0.1}}
			want, err := run(&retrieve.Options{Stages: stages}, query, &fakeSource{text: text, vec: vec, docs: raw})
			if err != nil {
				t.Fatal(err)
			}
			// Copies of the analysed docs derive their lazy parts
			// concurrently, as a cache's docs do under concurrent
			// queries (go test -race).
			var wg sync.WaitGroup
			res := make([][]retrieve.Candidate, 4)
			errs := make([]error, len(res))
			for g := range res {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res[g], errs[g] = run(&retrieve.Options{Stages: stages}, query, &fakeSource{text: text, vec: vec, docs: analysed})
				}()
			}
			wg.Wait()
			for g, got := range res {
				if errs[g] != nil {
					t.Fatal(errs[g])
				}
				if len(got) != len(want) {
					t.Fatalf("%q (%v): %d candidates analysed, %d raw", q, stages, len(got), len(want))
				}
				for i := range want {
					g, w := got[i], want[i]
					if g.ID != w.ID || g.Score != w.Score || g.Relevance != w.Relevance || g.OwnCoverage != w.OwnCoverage {
						t.Errorf("%q (%v) rank %d: analysed %d score %v relevance %v own %v, raw %d score %v relevance %v own %v",
							q, stages, i, g.ID, g.Score, g.Relevance, g.OwnCoverage, w.ID, w.Score, w.Relevance, w.OwnCoverage)
					}
				}
			}
		}
	}
}
