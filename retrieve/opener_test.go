package retrieve_test

import (
	"testing"

	"github.com/hmo-dev/hmo/retrieve"
)

// TestOpenerStage: for a question asking for a set, the turn that opens a
// session (no previous record) gains a share of the best score and
// passes turns that beat it by less; a derived record, a turn inside a
// session, a question asking for one thing and the pipeline without the
// stage keep the plain order.
func TestOpenerStage(t *testing.T) {
	docs := map[uint64]retrieve.Doc{
		1: {ID: 1, Session: "a", Prev: 7, Speaker: "Ana", Text: "a turn inside session a"},
		2: {ID: 2, Session: "b", Prev: 8, Speaker: "Ana", Text: "a turn inside session b"},
		3: {ID: 3, Session: "e", Derived: true, Speaker: "Ana", Text: "a summary of session e"},
		4: {ID: 4, Session: "c", Speaker: "Ana", Text: "the turn that opens session c"},
		5: {ID: 5, Session: "d", Speaker: "Ana", Text: "the turn that opens session d"},
		6: {ID: 6, Session: "f", Prev: 9, Speaker: "Ana", Text: "a turn that scores nothing"},
	}
	// Fusion scales the lexical scores to [0, 1] (6 anchors 0). 4 is 2%
	// of the best score below it, 5 is 10%: the default prior (5%) lifts
	// 4 to the top and leaves 5 below the others.
	text := []retrieve.Hit{{ID: 1, Score: 10}, {ID: 2, Score: 9.9}, {ID: 3, Score: 9.85}, {ID: 4, Score: 9.8}, {ID: 5, Score: 9}, {ID: 6, Score: 0}}
	plain := []uint64{1, 2, 3, 4, 5, 6}
	lifted := []uint64{4, 1, 2, 3, 5, 6}
	const set = "What books has Ana read?"
	const one = "What book did Ana read?"
	tests := []struct {
		name   string
		stages retrieve.Stages
		weight float64
		query  string
		want   []uint64
	}{
		{"set question", retrieve.StageText | retrieve.StageOpener, 0, set, lifted},
		{"set question, larger weight", retrieve.StageText | retrieve.StageOpener, 0.2, set, []uint64{4, 5, 1, 2, 3, 6}},
		{"one thing", retrieve.StageText | retrieve.StageOpener, 0, one, plain},
		{"without the stage", retrieve.StageText, 0, set, plain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{text: text, docs: docs}
			o := &retrieve.Options{Stages: tt.stages, Opener: retrieve.OpenerOptions{Weight: tt.weight}}
			got, err := run(o, &retrieve.Query{Text: tt.query, K: 6, Candidates: 6}, src)
			if err != nil {
				t.Fatal(err)
			}
			checkOrder(t, got, tt.want)
		})
	}
}

// TestOpenerWeightValidated: a weight outside [0, 1] is refused.
func TestOpenerWeightValidated(t *testing.T) {
	for _, w := range []float64{-0.1, 1.5} {
		if _, err := retrieve.New(&retrieve.Options{Opener: retrieve.OpenerOptions{Weight: w}}); err == nil {
			t.Errorf("New with opener weight %v: no error", w)
		}
	}
}
