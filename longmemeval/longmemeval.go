// Package longmemeval reads the LongMemEval benchmark (Wu et al., ICLR
// 2025, "LongMemEval: Benchmarking Chat Assistants on Long-Term
// Interactive Memory"): questions that each carry their own haystack of
// dated user–assistant sessions, the ids of the sessions that hold the
// answer, and has_answer marks on the evidence turns. It reads the
// longmemeval_s, _m and _oracle files alike (the oracle file lists only
// the evidence sessions, not in date order).
package longmemeval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ErrFormat marks a file that is not in the LongMemEval layout.
var ErrFormat = errors.New("longmemeval: malformed file")

// DateLayout is the layout of LongMemEval dates ("2023/05/20 (Sat) 02:21").
const DateLayout = "2006/01/02 (Mon) 15:04"

// AbstentionSuffix ends the id of an abstention question, one whose
// answer is not in the history; retrieval evaluation skips them, as the
// benchmark's own scripts do.
const AbstentionSuffix = "_abs"

// Question is one evaluation instance with its haystack.
type Question struct {
	ID       string
	Type     string // question_type: single-session-user, multi-session, ...
	Question string
	Answer   string    // the expected answer; numbers rendered as text
	Date     time.Time // question_date; zero when missing or unreadable
	Sessions []Session // the haystack, in file order
	// AnswerSessions are the answer_session_ids that name a haystack
	// session, deduplicated, in order.
	AnswerSessions []string
}

// Abstention reports whether the question's id marks it as one whose
// answer is not in the history.
func (q *Question) Abstention() bool { return strings.HasSuffix(q.ID, AbstentionSuffix) }

// EvidenceTurns returns the ids of the turns marked has_answer, in
// haystack order.
func (q *Question) EvidenceTurns() []string {
	var out []string
	for _, s := range q.Sessions {
		for _, t := range s.Turns {
			if t.HasAnswer {
				out = append(out, t.ID)
			}
		}
	}
	return out
}

// Session is one dated chat session of a haystack.
type Session struct {
	ID    string
	Date  time.Time // zero when missing or unreadable
	Turns []Turn    // blank turns are left out
}

// Turn is one message.
type Turn struct {
	// ID is the session id, "_" and the 1-based position of the turn in
	// its session, as the benchmark's retrieval scripts name turns.
	ID        string
	Role      string // "user" or "assistant"
	Content   string
	HasAnswer bool // the turn holds evidence for the answer
}

type rawQuestion struct {
	QuestionID         *string           `json:"question_id"`
	QuestionType       string            `json:"question_type"`
	Question           string            `json:"question"`
	Answer             json.RawMessage   `json:"answer"`
	QuestionDate       string            `json:"question_date"`
	HaystackSessionIDs []string          `json:"haystack_session_ids"`
	HaystackDates      []string          `json:"haystack_dates"`
	HaystackSessions   *[][]rawTurn      `json:"haystack_sessions"`
	AnswerSessionIDs   []json.RawMessage `json:"answer_session_ids"`
}

type rawTurn struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	HasAnswer bool   `json:"has_answer"`
}

// Read parses a LongMemEval JSON file: a list of questions. It refuses,
// with an error matching ErrFormat that names the question, a file that
// is not such a list, a question without an id or a haystack, an id used
// twice, haystack lists of different lengths and a session id used twice
// in one haystack. Bytes that are not UTF-8 read as U+FFFD (as
// encoding/json decodes them). Unreadable dates are kept as
// zero times; answer session ids that name no haystack session are
// dropped.
func Read(r io.Reader) ([]Question, error) {
	// Question by question, so that a large file (longmemeval_m is
	// 2.7 GB) is not held twice, as bytes and as questions.
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("%w: want a list of questions, found %v", ErrFormat, tokenName(tok))
	}
	var out []Question
	seen := map[string]bool{}
	for i := 0; dec.More(); i++ {
		var rq rawQuestion
		if err := dec.Decode(&rq); err != nil {
			return nil, fmt.Errorf("%w: question %d: %v", ErrFormat, i, err)
		}
		q, err := convert(rq)
		if err != nil {
			return nil, fmt.Errorf("%w: question %d%s: %v", ErrFormat, i, idNote(rq.QuestionID), err)
		}
		if seen[q.ID] {
			return nil, fmt.Errorf("%w: question %d: id %q used twice", ErrFormat, i, q.ID)
		}
		seen[q.ID] = true
		out = append(out, q)
	}
	if _, err := dec.Token(); err != nil { // the closing bracket
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the list of questions", ErrFormat)
	}
	if out == nil {
		out = []Question{}
	}
	return out, nil
}

// tokenName describes a JSON token for an error message.
func tokenName(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "an object"
	case string:
		return "a string"
	case nil:
		return "null"
	}
	return fmt.Sprint(tok)
}

func idNote(id *string) string {
	if id == nil {
		return ""
	}
	return fmt.Sprintf(" (%s)", *id)
}

func convert(rq rawQuestion) (Question, error) {
	if rq.QuestionID == nil || strings.TrimSpace(*rq.QuestionID) == "" {
		return Question{}, errors.New("no question_id")
	}
	if rq.HaystackSessions == nil {
		return Question{}, errors.New("no haystack_sessions")
	}
	sessions := *rq.HaystackSessions
	if len(rq.HaystackSessionIDs) != len(sessions) {
		return Question{}, fmt.Errorf("%d haystack_session_ids for %d haystack_sessions", len(rq.HaystackSessionIDs), len(sessions))
	}
	if len(rq.HaystackDates) != 0 && len(rq.HaystackDates) != len(sessions) {
		return Question{}, fmt.Errorf("%d haystack_dates for %d haystack_sessions", len(rq.HaystackDates), len(sessions))
	}
	q := Question{
		ID: *rq.QuestionID, Type: rq.QuestionType, Question: rq.Question,
		Answer: answerText(rq.Answer), Date: ParseDate(rq.QuestionDate),
	}
	known := map[string]bool{}
	for i, turns := range sessions {
		id := rq.HaystackSessionIDs[i]
		if known[id] {
			return Question{}, fmt.Errorf("session id %q used twice", id)
		}
		known[id] = true
		s := Session{ID: id}
		if len(rq.HaystackDates) != 0 {
			s.Date = ParseDate(rq.HaystackDates[i])
		}
		for j, t := range turns {
			if strings.TrimSpace(t.Content) == "" {
				continue
			}
			s.Turns = append(s.Turns, Turn{ID: id + "_" + strconv.Itoa(j+1), Role: t.Role, Content: t.Content, HasAnswer: t.HasAnswer})
		}
		q.Sessions = append(q.Sessions, s)
	}
	want := map[string]bool{}
	for _, raw := range rq.AnswerSessionIDs {
		// Ids are strings in the released files; accept numbers too.
		id := answerText(raw)
		if known[id] && !want[id] {
			want[id] = true
			q.AnswerSessions = append(q.AnswerSessions, id)
		}
	}
	return q, nil
}

// ParseDate reads a LongMemEval date ("2023/05/20 (Sat) 02:21"), also
// without the weekday or the time; it returns the zero time for anything
// else, and for years outside 1800-2199 (records must be dated within
// what the engine accepts).
func ParseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range []string{DateLayout, "2006/01/02 15:04", "2006/01/02"} {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() < 1800 || t.Year() > 2199 {
				return time.Time{}
			}
			return t
		}
	}
	return time.Time{}
}

// answerText renders an answer that may be a string or a number.
func answerText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}
