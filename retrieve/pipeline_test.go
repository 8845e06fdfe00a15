package retrieve_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/retrieve"
)

func TestParseStages(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want retrieve.Stages
		err  bool
	}{
		{"", retrieve.DefaultStages, false},
		{"default", retrieve.DefaultStages, false},
		{"-vector", retrieve.DefaultStages &^ retrieve.StageVector, false},
		{"none,text,speaker", retrieve.StageText | retrieve.StageSpeaker, false},
		{" None , +VECTOR ", retrieve.StageVector, false},
		{"none,text,segtree,-segtree", retrieve.StageText, false},
		{"none", 0, true},
		{"-text,-vector", 0, true},
		{"bogus", 0, true},
		{"-", 0, true},
	} {
		got, err := retrieve.ParseStages(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("ParseStages(%q) error %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if tc.err {
			if !errors.Is(err, retrieve.ErrInvalidStages) {
				t.Errorf("ParseStages(%q) error %v does not wrap ErrInvalidStages", tc.in, err)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("ParseStages(%q) = %s, want %s", tc.in, got, tc.want)
		}
		again, err := retrieve.ParseStages("none," + got.String())
		if err != nil || again != got {
			t.Errorf("round trip of %s: %s, %v", got, again, err)
		}
	}
}

func TestFusion(t *testing.T) {
	src := &fakeSource{
		text: []retrieve.Hit{{ID: 1, Score: 10}, {ID: 2, Score: 6}, {ID: 3, Score: 2}},
		vec:  []retrieve.Hit{{ID: 3, Score: 0.9}, {ID: 4, Score: 0.5}, {ID: 1, Score: 0.1}},
	}
	q := &retrieve.Query{Text: "q", Vector: []float32{1}, K: 10, Candidates: 10}
	for _, tc := range []struct {
		name string
		o    retrieve.Options
		want []uint64
	}{
		// linear 0.8/0.2: 1 = 0.8, 2 = 0.4, 3 = 0.2, 4 = 0.2*0.5 = 0.1
		{"linear", retrieve.Options{}, []uint64{1, 2, 3, 4}},
		// linear 0.2/0.8: 1 = 0.2, 2 = 0.1, 3 = 0.8, 4 = 0.4
		{"vector-heavy", retrieve.Options{Fusion: retrieve.FusionOptions{TextWeight: 0.2}}, []uint64{3, 4, 1, 2}},
		{"text only", retrieve.Options{Stages: retrieve.StageText}, []uint64{1, 2, 3}},
		{"vector only", retrieve.Options{Stages: retrieve.StageVector}, []uint64{3, 4, 1}},
		// rrf: 1 = 1/61 + 1/63 = 3; 2 = 1/62 = 4: ties, higher id first
		{"rrf", retrieve.Options{Fusion: retrieve.FusionOptions{Method: retrieve.FusionRRF}}, []uint64{3, 1, 4, 2}},
	} {
		got, err := run(&tc.o, q, src)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(ids(got), tc.want) {
			t.Errorf("%s: order %v, want %v", tc.name, ids(got), tc.want)
		}
	}
}

func TestNewRejects(t *testing.T) {
	for _, o := range []retrieve.Options{
		{Fusion: retrieve.FusionOptions{Method: "avg"}},
		{Fusion: retrieve.FusionOptions{TextWeight: 1.5}},
		{Fusion: retrieve.FusionOptions{RRFK: -1}},
		{Stages: retrieve.StageSpeaker},
	} {
		if _, err := retrieve.New(&o); !errors.Is(err, retrieve.ErrInvalidOption) {
			t.Errorf("New(%+v) = %v, want ErrInvalidOption", o, err)
		}
	}
}

// RunBeside hands beside the final list's ids, once, and returns the
// list Run returns, its soft match worked out, with a Lexicon (beside
// on its own goroutine) and without.
func TestRunBeside(t *testing.T) {
	docs := map[uint64]retrieve.Doc{}
	var text, vec []retrieve.Hit
	for i := range 40 {
		id := uint64(i + 1)
		docs[id] = retrieve.Doc{ID: id, Scope: "s", Session: fmt.Sprint(i / 10), Speaker: "Ann", Text: []string{
			"I'm allergic to shellfish", "the weather is nice today", "we went camping last week"}[i%3]}
		text = append(text, retrieve.Hit{ID: id, Score: float64(50 - i)})
		vec = append(vec, retrieve.Hit{ID: uint64(40 - i), Score: 0.9 - 0.01*float64(i)})
	}
	plain := fakeSource{text: text, vec: vec, docs: docs}
	lex := &lexSource{fakeSource: plain, vecs: map[string][]float32{
		"allergy": {1, 0}, "allergic": {0.9, 0.436}, "shellfish": {0, 1}, "food": {0.6, 0.8}, "weather": {0, -1},
	}}
	p, err := retrieve.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []retrieve.Source{&plain, lex} {
		for _, q := range []string{"food allergy", "when did Ann go camping"} {
			query := func() *retrieve.Query {
				return &retrieve.Query{Text: q, K: 5, Candidates: 40, Vector: []float32{1}}
			}
			want, err := p.Run(context.Background(), query(), src)
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			var seen []uint64
			got, err := p.RunBeside(context.Background(), query(), src, func(ids []uint64) {
				calls++
				seen = ids
			})
			if err != nil {
				t.Fatal(err)
			}
			if calls != 1 || !slices.Equal(seen, ids(want)) {
				t.Errorf("%q (%T): beside called %d times with %v, want once with %v", q, src, calls, seen, ids(want))
			}
			if !slices.EqualFunc(got, want, func(a, b retrieve.Candidate) bool {
				return a.ID == b.ID && a.Score == b.Score && a.Relevance == b.Relevance && a.SoftMatch == b.SoftMatch && a.OwnCoverage == b.OwnCoverage
			}) {
				t.Errorf("%q (%T): RunBeside's list differs from Run's", q, src)
			}
			if _, ok := src.(retrieve.Lexicon); ok && !slices.ContainsFunc(got, func(c retrieve.Candidate) bool { return c.SoftMatch > 0 }) {
				t.Errorf("%q: no soft match", q)
			}
		}
	}
}
