package retrieve_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/retrieve"
)

// prefetchSource is a fakeSource whose lexical search waits (up to a
// bound) for the vector candidates to be prefetched.
type prefetchSource struct {
	fakeSource
	fetched chan []uint64
	wait    time.Duration // how long Text waits for a prefetch
	during  bool          // Prefetch came while Text was waiting
}

func (s *prefetchSource) Text(ctx context.Context, q *retrieve.Query, c int) ([]retrieve.Hit, error) {
	select {
	case ids := <-s.fetched:
		s.during = true
		s.fetched <- ids
	case <-time.After(s.wait):
	}
	return s.fakeSource.Text(ctx, q, c)
}

func (s *prefetchSource) Prefetch(ids []uint64) { s.fetched <- ids }

// TestVectorCandidatesPrefetched: a source that can read ahead gets the
// vector candidates' ids while the lexical search still runs, and only
// when a stage reads the candidates' docs; the ranking is the one
// without read-ahead.
func TestVectorCandidatesPrefetched(t *testing.T) {
	docs := map[uint64]retrieve.Doc{}
	for id := uint64(1); id <= 6; id++ {
		docs[id] = retrieve.Doc{ID: id, Session: "s", Speaker: "Ann", Text: "a note about the lake"}
	}
	text := []retrieve.Hit{{ID: 1, Score: 3}, {ID: 2, Score: 2}}
	vec := []retrieve.Hit{{ID: 5, Score: 0.9}, {ID: 2, Score: 0.8}, {ID: 6, Score: 0.7}}
	for _, tc := range []struct {
		stages retrieve.Stages
		want   []uint64 // prefetched; nil for none
		wait   time.Duration
	}{
		{retrieve.DefaultStages, []uint64{5, 2, 6}, 5 * time.Second},
		{retrieve.StageText | retrieve.StageVector, nil, 50 * time.Millisecond},
	} {
		q := &retrieve.Query{Text: "the lake", Vector: []float32{1}, K: 3, Candidates: 3}
		want, err := run(&retrieve.Options{Stages: tc.stages}, q, &fakeSource{text: text, vec: vec, docs: docs})
		if err != nil {
			t.Fatal(err)
		}
		src := &prefetchSource{fakeSource: fakeSource{text: text, vec: vec, docs: docs}, fetched: make(chan []uint64, 1), wait: tc.wait}
		got, err := run(&retrieve.Options{Stages: tc.stages}, q, src)
		if err != nil {
			t.Fatal(err)
		}
		var fetched []uint64
		select {
		case fetched = <-src.fetched:
		default:
		}
		if !slices.Equal(fetched, tc.want) {
			t.Errorf("%v: prefetched %v, want %v", tc.stages, fetched, tc.want)
		}
		if tc.want != nil && !src.during {
			t.Errorf("%v: the prefetch did not come while the lexical search ran", tc.stages)
		}
		if !slices.Equal(ids(got), ids(want)) {
			t.Errorf("%v: ranking %v with read-ahead, %v without", tc.stages, ids(got), ids(want))
		}
	}
}

// feedbackSource is a fakeSource whose vector search waits (up to a
// bound) for the feedback search: the lexical search that comes second,
// with the expanded question.
type feedbackSource struct {
	fakeSource
	question string
	second   chan struct{} // closed at the feedback search
	once     sync.Once
	wait     time.Duration
	during   bool // the feedback search came while Vector waited
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

// TestFeedbackBesideVectorSearch: the feedback search (prf) needs only
// the first lexical pass, and runs while the vector candidates are
// still being found; the ranking is the one of a source whose searches
// do not wait for each other.
func TestFeedbackBesideVectorSearch(t *testing.T) {
	docs := map[uint64]retrieve.Doc{
		1: {ID: 1, Session: "s", Speaker: "Ann", Text: "we swam in the lake at dawn"},
		2: {ID: 2, Session: "s", Speaker: "Ann", Text: "the lake was cold and the water clear"},
		3: {ID: 3, Session: "t", Speaker: "Bob", Text: "a note about the garden"},
	}
	text := []retrieve.Hit{{ID: 1, Score: 3}, {ID: 2, Score: 2}}
	vec := []retrieve.Hit{{ID: 3, Score: 0.9}, {ID: 2, Score: 0.8}}
	for _, tc := range []struct {
		stages retrieve.Stages
		during bool // the feedback search must come while Vector waits
		wait   time.Duration
	}{
		{retrieve.DefaultStages, true, 5 * time.Second},
		{retrieve.DefaultStages &^ retrieve.StagePRF, false, 50 * time.Millisecond},
	} {
		q := &retrieve.Query{Text: "the lake", Vector: []float32{1}, K: 3, Candidates: 3}
		want, err := run(&retrieve.Options{Stages: tc.stages}, q, &fakeSource{text: text, vec: vec, docs: docs})
		if err != nil {
			t.Fatal(err)
		}
		src := &feedbackSource{fakeSource: fakeSource{text: text, vec: vec, docs: docs}, question: q.Text, second: make(chan struct{}), wait: tc.wait}
		got, err := run(&retrieve.Options{Stages: tc.stages}, q, src)
		if err != nil {
			t.Fatal(err)
		}
		if src.during != tc.during {
			t.Errorf("%v: the feedback search came while the vector search ran: %t, want %t", tc.stages, src.during, tc.during)
		}
		if !slices.Equal(ids(got), ids(want)) {
			t.Errorf("%v: ranking %v, %v from a source that does not wait", tc.stages, ids(got), ids(want))
		}
		for i := range got {
			if got[i].Score != want[i].Score {
				t.Errorf("%v: candidate %d scores %v, %v from a source that does not wait", tc.stages, got[i].ID, got[i].Score, want[i].Score)
			}
		}
	}
}
