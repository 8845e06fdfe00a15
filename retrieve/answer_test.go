package retrieve_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/hmo-dev/hmo/retrieve"
)

func TestAsksForThing(t *testing.T) {
	for q, want := range map[string]bool{
		"Which countries has Maria visited?":       true,
		"What books has Tim read?":                 true,
		"Who did John go to yoga with?":            true,
		"Where has Melanie camped?":                true,
		"How many pets does James have?":           true,
		"In what ways is Caroline helping?":        true,
		"food allergy":                             false, // asks for nothing
		"When did Maria go to Spain?":              false, // asks for a time
		"What year did she move?":                  false,
		"How did John feel about the race?":        false,
		"Did James have a girlfriend during 2022?": false,
		"": false,
	} {
		if got := retrieve.AsksForThing(q); got != want {
			t.Errorf("AsksForThing(%q) = %v, want %v", q, got, want)
		}
	}
}

// namerSource names specific entities in some records.
type namerSource struct {
	fakeSource
	ents map[uint64][][]string
	err  error
}

func (s *namerSource) SpecificEntities(ids []uint64) ([][][]string, error) {
	out := make([][][]string, len(ids))
	for i, id := range ids {
		out[i] = s.ents[id]
	}
	return out, s.err
}

// answerSource: record 1 leads on text and names nothing, 2 names Spain,
// 3 names only Chicago, 4 names "Mel", a short form of Melanie, 5
// trails.
func answerSource() *namerSource {
	return &namerSource{
		fakeSource: fakeSource{text: []retrieve.Hit{{ID: 1, Score: 10}, {ID: 2, Score: 9.5}, {ID: 3, Score: 9.4}, {ID: 4, Score: 9.3}, {ID: 5, Score: 0}}},
		ents: map[uint64][][]string{
			2: {{"spain"}},
			3: {{"chicago"}},
			4: {{"melanie", "mel"}},
		},
	}
}

func TestAnswerPrior(t *testing.T) {
	on := retrieve.StageText | retrieve.StageAnswer
	for _, tc := range []struct {
		name   string
		q      string
		stages retrieve.Stages
		want   []uint64
	}{
		{"off", "Which countries has Maria visited?", retrieve.StageText, []uint64{1, 2, 3, 4, 5}},
		{"records naming an entity rise", "Which countries has Maria visited?", on, []uint64{2, 3, 4, 1, 5}},
		{"an entity the question names does not count", "Which city was John in before Chicago?", on, []uint64{2, 4, 1, 3, 5}},
		{"a short form the question names does not count", "Who did Mel meet?", on, []uint64{2, 3, 1, 4, 5}},
		{"a query asking for nothing is left as it is", "food allergy", on, []uint64{1, 2, 3, 4, 5}},
		{"a when question is left to the time prior", "When did Maria go to Spain?", on, []uint64{1, 2, 3, 4, 5}},
	} {
		got, err := run(&retrieve.Options{Stages: tc.stages}, &retrieve.Query{Text: tc.q, K: 5, Candidates: 10}, answerSource())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ids(got), tc.want) {
			t.Errorf("%s: %q ranks %v, want %v", tc.name, tc.q, ids(got), tc.want)
		}
	}
}

// TestAnswerPriorNamedSpeaker: when the question names one speaker, only
// that speaker's records naming an entity rise.
func TestAnswerPriorNamedSpeaker(t *testing.T) {
	src := &namerSource{
		fakeSource: fakeSource{
			text: []retrieve.Hit{{ID: 1, Score: 10}, {ID: 2, Score: 9.5}, {ID: 3, Score: 9.4}, {ID: 4, Score: 0}},
			docs: map[uint64]retrieve.Doc{
				1: {ID: 1, Speaker: "Maria", Text: "I love travelling"},
				2: {ID: 2, Speaker: "John", Text: "Spain was great"},
				3: {ID: 3, Speaker: "Maria", Text: "Italy was great"},
				4: {ID: 4, Speaker: "John", Text: "ok"},
			},
		},
		ents: map[uint64][][]string{2: {{"spain"}}, 3: {{"italy"}}},
	}
	on := retrieve.StageText | retrieve.StageAnswer
	for _, tc := range []struct {
		q    string
		want []uint64
	}{
		{"Which countries has Maria visited?", []uint64{3, 1, 2, 4}},
		{"Which countries has John visited?", []uint64{2, 1, 3, 4}},
		{"Which countries have Maria and John visited?", []uint64{2, 3, 1, 4}},
		{"Which countries were visited?", []uint64{2, 3, 1, 4}},
	} {
		got, err := run(&retrieve.Options{Stages: on}, &retrieve.Query{Text: tc.q, K: 4, Candidates: 10}, src)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ids(got), tc.want) {
			t.Errorf("%q ranks %v, want %v", tc.q, ids(got), tc.want)
		}
	}
}

func TestAnswerPriorError(t *testing.T) {
	src := answerSource()
	src.err = errors.New("graph gone")
	_, err := run(&retrieve.Options{Stages: retrieve.StageText | retrieve.StageAnswer}, &retrieve.Query{Text: "Which countries?", K: 5, Candidates: 10}, src)
	if !errors.Is(err, src.err) {
		t.Fatalf("err %v, want the source's", err)
	}
}

// TestDefaultRunsAnswerPrior: the default pipeline puts a record naming
// what a question asks for above small talk that scored a little better
// on its words (the answer stage is in DefaultStages).
func TestDefaultRunsAnswerPrior(t *testing.T) {
	if !retrieve.DefaultStages.Has(retrieve.StageAnswer) {
		t.Fatal("answer stage not in DefaultStages")
	}
	got, err := run(nil, &retrieve.Query{Text: "Which countries has Maria visited?", K: 5, Candidates: 10}, answerSource())
	if err != nil {
		t.Fatal(err)
	}
	if ids(got)[0] == 1 {
		t.Errorf("default ranks %v: the record naming no entity still leads", ids(got))
	}
}
