package retrieve_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/retrieve"
)

// TestAsksForSet: questions whose answers gather several occasions
// (plural things asked for in the present or present perfect, "how
// many", "what has <Name> done") against those asking for one thing or
// bound to one occasion (simple past, a named time).
func TestAsksForSet(t *testing.T) {
	tests := []struct {
		q    string
		want bool
	}{
		{"What activities does Melanie partake in?", true},
		{"What books has Melanie read?", true},
		{"Which cities has Jon visited?", true},
		{"What LGBTQ+ events has Caroline participated in?", true},
		{"What musical artists/bands has Melanie seen?", true},
		{"What has Melanie painted?", true},
		{"Where has Melanie camped?", true},
		{"What are Maria's dogs' names?", true},
		{"How many children does Melanie have?", true},
		{"How many times has Joanna found new hiking trails?", true},
		{"How many times did Audrey and Andrew plan to hike together?", true},
		{"What people has Maria met and helped while volunteering?", true},
		// One thing.
		{"What did Melanie paint recently?", false},
		{"What is Caroline's identity?", false},
		{"How long has Melanie been creating art?", false},
		{"Who supports Caroline when she has a negative experience?", false},
		{"What kind of art does Caroline make?", false},
		{"Why did Gina decide to start her own clothing store?", false},
		{"When did Caroline go to the LGBTQ support group?", false},
		{"What does Jon's dance studio offer?", false},
		{"What is the status of the process?", false},
		// One occasion: simple past, a named time.
		{"What kind of activities did Maria do at the picnic with her church friends?", false},
		{"What games were played at the gaming tournament organized by John on 31 October, 2022?", false},
		{"Which countries has James visited in July 2022?", false},
		// Not a question.
		{"food allergy", false},
		{"dogs cats hobbies", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := retrieve.AsksForSet(tt.q); got != tt.want {
			t.Errorf("AsksForSet(%q) = %v, want %v", tt.q, got, tt.want)
		}
	}
}

// TestCoverStage: for a set question, the first ten results hold at
// most three turns of one session (the others move right below the ten,
// in their order), and the session prior does not pool a session's best
// score over its turns; a question asking for one thing keeps the plain
// ranking, as does the pipeline without the stage.
func TestCoverStage(t *testing.T) {
	// Session "a" holds the six best candidates (ids 20..15), sessions
	// "b".."f" one each (ids 14..10), scores falling with the id.
	docs := map[uint64]retrieve.Doc{}
	var text []retrieve.Hit
	for id := uint64(20); id >= 10; id-- {
		s := "a"
		if id < 15 {
			s = string(rune('b' + 14 - id))
		}
		docs[id] = retrieve.Doc{ID: id, Session: s, Speaker: "Ana", Text: fmt.Sprintf("turn %d", id)}
		text = append(text, retrieve.Hit{ID: id, Score: float64(id)})
	}
	plain := []uint64{20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10}
	covered := []uint64{20, 19, 18, 14, 13, 12, 11, 10, 17, 16, 15}
	const set = "What books has Ana read?"
	const one = "What book did Ana read?"
	base := retrieve.StageText
	tests := []struct {
		name   string
		stages retrieve.Stages
		query  string
		want   []uint64
	}{
		{"set question", base | retrieve.StageCover, set, covered},
		{"set question with the session prior", base | retrieve.StageSession | retrieve.StageCover, set, covered},
		{"one thing", base | retrieve.StageCover, one, plain},
		{"without the stage", base, set, plain},
		{"session prior without the stage", base | retrieve.StageSession, set, plain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{text: text, docs: docs}
			got, err := run(&retrieve.Options{Stages: tt.stages}, &retrieve.Query{Text: tt.query, K: 11, Candidates: 11}, src)
			if err != nil {
				t.Fatal(err)
			}
			checkOrder(t, got, tt.want)
		})
	}
}

// TestCoverSkipsSessionPrior: the session prior lifts the turns of the
// best session above a better turn of another for a question asking for
// one thing; for a set question the cover stage leaves it out.
func TestCoverSkipsSessionPrior(t *testing.T) {
	docs := map[uint64]retrieve.Doc{
		1: {ID: 1, Session: "a", Speaker: "Ana", Text: "a1"},
		2: {ID: 2, Session: "a", Speaker: "Ana", Text: "a2"},
		3: {ID: 3, Session: "b", Speaker: "Ana", Text: "b1"},
	}
	text := []retrieve.Hit{{ID: 1, Score: 10}, {ID: 3, Score: 6}, {ID: 2, Score: 5.5}}
	tests := []struct {
		name  string
		query string
		want  []uint64
	}{
		// 2 gets 5.5 + 0.25·10 = 8, 3 gets 6 + 0.25·6 = 7.5.
		{"one thing: pooled", "What book did Ana read?", []uint64{1, 2, 3}},
		{"set question: not pooled", "What books has Ana read?", []uint64{1, 3, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{text: text, docs: docs}
			o := &retrieve.Options{Stages: retrieve.StageText | retrieve.StageSession | retrieve.StageCover}
			got, err := run(o, &retrieve.Query{Text: tt.query, K: 3, Candidates: 3}, src)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tt.want) {
				t.Errorf("order %v, want %v", ids(got), tt.want)
			}
		})
	}
}
