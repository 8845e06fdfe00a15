package longmemeval

import (
	"sort"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

// TurnGap spaces the turns of a session in event time, so they keep their
// order within the session's date.
const TurnGap = 30 * time.Second

// undatedStart is where event time starts for a haystack with no readable
// session date.
var undatedStart = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// SessionInputs are the records of one session, ready to remember.
type SessionInputs struct {
	Session *Session
	Inputs  []engine.Input
	End     time.Time // just after the session's last turn
}

// Inputs turns a question's haystack into records, one batch per session
// in date order (the file's order among equal or missing dates): scope is
// the question id, session the session id, role the turn's role, and the
// turn id the source. A session without a readable date starts an hour
// after the one before it, one dated inside the session before it where
// that one ends; undated sessions before the first dated one count from
// a day before that date (1 January 2000 when none is dated).
func (q *Question) Inputs() []SessionInputs {
	order := make([]int, len(q.Sessions))
	for i := range order {
		order[i] = i
	}
	// Undated sessions take the date of the session before them in the
	// file, so a stable sort keeps them where they are.
	key := make([]time.Time, len(q.Sessions))
	var prev time.Time
	for i, s := range q.Sessions {
		if !s.Date.IsZero() {
			prev = s.Date
		}
		key[i] = prev
	}
	sort.SliceStable(order, func(a, b int) bool { return key[order[a]].Before(key[order[b]]) })
	last := undatedStart
	for _, i := range order {
		if d := q.Sessions[i].Date; !d.IsZero() {
			last = d.Add(-24 * time.Hour)
			break
		}
	}
	out := make([]SessionInputs, 0, len(q.Sessions))
	for _, i := range order {
		s := &q.Sessions[i]
		t := s.Date
		switch {
		case t.IsZero():
			t = last.Add(time.Hour)
		case t.Before(last): // dated inside the session before it
			t = last
		}
		ins := make([]engine.Input, len(s.Turns))
		for j, turn := range s.Turns {
			ins[j] = engine.Input{
				Scope: q.ID, Session: s.ID, Role: turn.Role,
				Time: t.Add(time.Duration(j) * TurnGap), Text: turn.Content, Sources: []string{turn.ID},
			}
		}
		last = t.Add(time.Duration(len(s.Turns)) * TurnGap)
		out = append(out, SessionInputs{Session: s, Inputs: ins, End: last})
	}
	return out
}
