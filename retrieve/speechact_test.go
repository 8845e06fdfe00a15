package retrieve_test

import (
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/retrieve"
)

func TestIsQuestion(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"which database do we use?", true},
		{"Big change. Is the team happy with it?", true},
		{"How lovely! Are you part of the wedding?", true},
		{"We decided on Postgres 16. Anything else?", false},
		{"We decided on Postgres 16.", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := retrieve.IsQuestion(tt.text); got != tt.want {
			t.Errorf("IsQuestion(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestContentTermsAndCoverage(t *testing.T) {
	if got, want := retrieve.ContentTerms("What is the name of the cats? Allergy!"), []string{"name", "cat", "aller"}; !slices.Equal(got, want) {
		t.Errorf("ContentTerms = %q, want %q", got, want)
	}
	terms := retrieve.ContentTerms("food allergy")
	for _, tt := range []struct {
		text string
		want float64
	}{
		{"I'm allergic to shellfish", 0.5},
		{"local food, allergies", 1},
		{"nothing here", 0},
	} {
		if got := retrieve.OwnCoverage(terms, tt.text); got != tt.want {
			t.Errorf("OwnCoverage(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// TestSpeechActPrior: a follow-up question that matched through its
// context ranks below the statement it follows, which inherits its score
// (even when it was no candidate); a question holding the query's terms
// still drops below a statement that matches almost as well.
func TestSpeechActPrior(t *testing.T) {
	src := &fakeSource{
		text: []retrieve.Hit{{ID: 2, Score: 3}, {ID: 4, Score: 2.9}, {ID: 3, Score: 2.8}, {ID: 9, Score: 0.1}},
		docs: map[uint64]retrieve.Doc{
			1: {ID: 1, Session: "s", Text: "At work we migrate from Airflow to Dagster."},
			2: {ID: 2, Prev: 1, Session: "s", Text: "Big change. Is the team happy with it?"},
			3: {ID: 3, Session: "s", Text: "Our pipelines run on Dagster now."},
			4: {ID: 4, Prev: 3, Session: "s", Text: "Which tool runs the pipelines?"},
			9: {ID: 9, Session: "s", Text: "unrelated"},
		},
	}
	o := &retrieve.Options{Stages: retrieve.StageText | retrieve.StageSpeechAct}
	got, err := run(o, &retrieve.Query{Text: "which tool replaced Airflow pipelines", K: 5, Candidates: 5}, src)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{1, 3, 2, 4, 9}; !slices.Equal(ids(got), want) {
		t.Errorf("ranking %v, want %v", ids(got), want)
	}
	o.Stages = retrieve.StageText
	got, _ = run(o, &retrieve.Query{Text: "which tool replaced Airflow pipelines", K: 5, Candidates: 5}, src)
	if ids(got)[0] != 2 {
		t.Fatalf("precondition: without the prior the question ranks first, got %v", ids(got))
	}
}

func TestRelevance(t *testing.T) {
	lo := retrieve.Relevance(0, false, 0, 0)
	if !(lo < retrieve.DefaultMinScore && retrieve.Relevance(1, true, 3, 1) > 0.2 &&
		retrieve.Relevance(0.5, true, 2, 0.5) > retrieve.Relevance(0.5, false, 2, 0.5) &&
		retrieve.Relevance(0, false, 2, 0.5) > retrieve.Relevance(0, false, 2, 0) &&
		retrieve.Relevance(0, false, 5, 0) > retrieve.DefaultMinScore) {
		t.Errorf("relevance not monotone or floor misplaced: %v %v", lo, retrieve.DefaultMinScore)
	}
}

func TestNamelessTopicWords(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want int
	}{
		{"What did Caroline research?", 1},
		{"What did Caroline research about adoption?", 2},
		{"Pottery classes with Melanie", 2}, // the opening word is no name
		{"When did Jon and Gina meet?", 1},
		{"", 0},
	} {
		if got := retrieve.NamelessTopicWords(tc.q); got != tc.want {
			t.Errorf("NamelessTopicWords(%q) = %d, want %d", tc.q, got, tc.want)
		}
	}
}
