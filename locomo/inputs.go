package locomo

import (
	"strconv"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

// TurnGap spaces the turns of a session in event time, so they keep their
// order within the session's date.
const TurnGap = 30 * time.Second

// undatedStart is where event time starts for a conversation with no
// readable session date.
var undatedStart = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// SessionInputs are the records of one session, ready to remember.
type SessionInputs struct {
	Session *Session
	Inputs  []engine.Input
	End     time.Time // just after the session's last turn
}

// Inputs turns a conversation into records, one batch per session in
// order: scope is the sample id, session "session_N", role the speaker,
// and the turn id the source. A session without a readable date, or dated
// before the one it follows, starts an hour after the previous session;
// sessions before the first dated one count from a day before that date
// (1 January 2000 when none is dated).
func (c *Conversation) Inputs() []SessionInputs {
	last := undatedStart
	for _, s := range c.Sessions {
		if !s.Time.IsZero() {
			last = s.Time.Add(-24 * time.Hour)
			break
		}
	}
	out := make([]SessionInputs, 0, len(c.Sessions))
	for i := range c.Sessions {
		s := &c.Sessions[i]
		t := s.Time
		if t.IsZero() || t.Before(last) {
			t = last.Add(time.Hour)
		}
		ins := make([]engine.Input, len(s.Turns))
		for j, turn := range s.Turns {
			ins[j] = engine.Input{
				Scope: c.ID, Session: "session_" + strconv.Itoa(s.N), Role: turn.Speaker,
				Time: t.Add(time.Duration(j) * TurnGap), Text: turn.Text, Sources: []string{turn.ID},
			}
		}
		last = t.Add(time.Duration(len(s.Turns)) * TurnGap)
		out = append(out, SessionInputs{Session: s, Inputs: ins, End: last})
	}
	return out
}
