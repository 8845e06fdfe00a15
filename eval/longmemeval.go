package eval

import (
	"context"

	"github.com/hmo-dev/hmo/longmemeval"
)

// LongMemEval ingests each question's haystack into its own store,
// sessions in date order with their dates as event time, sets the replay
// clock to the question's date and asks it. Abstention questions are
// skipped (their answer is not in the history), as are questions whose
// answer sessions are not in their haystack. The category is the
// question type; turn metrics count the turns marked has_answer and are
// left out for questions without such marks.
func LongMemEval(ctx context.Context, qs []longmemeval.Question, open Opener, o Options) (*Report, error) {
	return run(ctx, "longmemeval", len(qs), func(i int) haystack { return longMemEvalHaystack(&qs[i]) }, open, o)
}

func longMemEvalHaystack(q *longmemeval.Question) haystack {
	h := haystack{scope: q.ID, evidence: map[string]bool{}}
	sessionOf := map[string]string{}
	for _, s := range q.Inputs() {
		h.batches = append(h.batches, batch{inputs: s.Inputs, end: s.End})
		for _, t := range s.Session.Turns {
			sessionOf[t.ID] = s.Session.ID
		}
	}
	if q.Abstention() || len(q.AnswerSessions) == 0 {
		h.skipped++
		return h
	}
	turns := q.EvidenceTurns()
	for _, t := range turns {
		h.evidence[t] = true
	}
	h.questions = []probe{{
		id: q.ID, category: q.Type, text: q.Question, at: q.Date,
		ev: Evidence{Turns: turns, Sessions: q.AnswerSessions, SessionOf: func(t string) string { return sessionOf[t] }},
	}}
	return h
}
