package retrieve_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/retrieve"
)

// feedbackSource is a fakeSource whose vector search waits (up to a
// bound) for the feedback's second lexical search to start.
type feedbackSource struct {
	fakeSource
	question string
	wait     time.Duration
	second   chan struct{} // closed when a lexical search of another question starts
	once     sync.Once
	during   bool // the second lexical search started while the vector search ran
}

func (s *feedbackSource) Text(ctx context.Context, q *retrieve.Query, c int) ([]retrieve.Hit, error) {
	if q.Text != s.question {
		s.once.Do(func() { close(s.second) })
	}
	return s.fakeSource.Text(ctx, q, c)
}

func (s *feedbackSource) Vector(ctx context.Context, q *retrieve.Query, c int) ([]retrieve.Hit, error) {
	select {
	case <-s.second:
		s.during = true
	case <-time.After(s.wait):
	}
	return s.fakeSource.Vector(ctx, q, c)
}

// TestFeedbackBesideVectorSearch: the feedback's second lexical search
// needs only the first lexical pass, so it runs while the vector search
// still runs, not after it; the ranking is the one of a source that
// answers at once.
func TestFeedbackBesideVectorSearch(t *testing.T) {
	docs := map[uint64]retrieve.Doc{
		1: {ID: 1, Text: "we rowed across the lake at dawn"},
		2: {ID: 2, Text: "the lake froze early that winter"},
		3: {ID: 3, Text: "a cabin by the lake"},
		4: {ID: 4, Text: "dawn over the water"},
	}
	text := []retrieve.Hit{{ID: 1, Score: 3}, {ID: 2, Score: 2}, {ID: 3, Score: 1}}
	vec := []retrieve.Hit{{ID: 4, Score: 0.9}, {ID: 2, Score: 0.8}}
	for _, stages := range []retrieve.Stages{
		retrieve.StageText | retrieve.StageVector | retrieve.StagePRF,
		retrieve.DefaultStages,
	} {
		o := &retrieve.Options{Stages: stages, PRF: retrieve.PRFOptions{Docs: 2, Terms: 3}}
		q := &retrieve.Query{Text: "the lake", Vector: []float32{1}, K: 3, Candidates: 3}
		want, err := run(o, q, &fakeSource{text: text, vec: vec, docs: docs})
		if err != nil {
			t.Fatal(err)
		}
		src := &feedbackSource{fakeSource: fakeSource{text: text, vec: vec, docs: docs}, question: q.Text,
			wait: 5 * time.Second, second: make(chan struct{})}
		got, err := run(o, q, src)
		if err != nil {
			t.Fatal(err)
		}
		if !src.during {
			t.Errorf("%v: the feedback search did not start while the vector search ran", stages)
		}
		if !slices.Equal(ids(got), ids(want)) {
			t.Errorf("%v: ranking %v, want %v", stages, ids(got), ids(want))
		}
	}
}
