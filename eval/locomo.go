package eval

import (
	"context"
	"strconv"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/locomo"
)

// LoCoMo ingests each conversation into its own store in session order,
// asks every non-adversarial question, and reports recall. Question ids
// are the sample id, ":q" and the question's position in its sample
// ("conv-26:q12"), so runs over one file pair up.
func LoCoMo(ctx context.Context, convs []locomo.Conversation, open Opener, o Options) (*Report, error) {
	return run(ctx, "locomo", len(convs), func(i int) haystack { return locomoHaystack(convs[i]) }, open, o)
}

// LoCoMoEvidence is the evidence of a LoCoMo question: its turns and
// their sessions.
func LoCoMoEvidence(turns []string) Evidence {
	ev := Evidence{Turns: turns, SessionOf: locomoSession}
	seen := map[string]bool{}
	for _, t := range turns {
		if s := locomoSession(t); !seen[s] {
			seen[s] = true
			ev.Sessions = append(ev.Sessions, s)
		}
	}
	return ev
}

func locomoSession(turn string) string { return strconv.Itoa(locomo.SessionOf(turn)) }

func locomoHaystack(c locomo.Conversation) haystack {
	h := haystack{scope: c.ID, evidence: map[string]bool{}}
	for _, s := range c.Inputs() {
		h.batches = append(h.batches, batch{inputs: s.Inputs, end: s.End})
	}
	for i, q := range c.QA {
		if q.Category == locomo.Adversarial {
			continue
		}
		for _, id := range q.Evidence {
			h.evidence[id] = true
		}
		if len(q.Evidence) == 0 {
			h.skipped++
			continue
		}
		h.questions = append(h.questions, probe{
			id: c.ID + ":q" + strconv.Itoa(i), category: locomo.CategoryName(q.Category),
			text: q.Question, ev: LoCoMoEvidence(q.Evidence),
		})
	}
	return h
}

// Ingest remembers a conversation's sessions in order, one batch per
// session, dated as locomo.Conversation.Inputs says, and returns the turn
// id of each record. A non-nil clock is set just after each session's last
// turn before the session is remembered.
func Ingest(ctx context.Context, e *engine.Engine, c locomo.Conversation, clock *Clock) (map[uint64]string, error) {
	turnOf := map[uint64]string{}
	for _, s := range c.Inputs() {
		if clock != nil {
			clock.Set(s.End)
		}
		ids, err := e.Remember(ctx, s.Inputs...)
		if err != nil {
			return nil, err
		}
		for i, id := range ids {
			turnOf[id] = s.Session.Turns[i].ID
		}
	}
	return turnOf, nil
}
