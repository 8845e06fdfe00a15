// Package locomo reads the LoCoMo long-term conversation benchmark
// (Maharana et al., ACL 2024): conversations made of dated sessions of
// turns, and questions whose evidence names turns ("D3:7").
package locomo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Sentinel errors.
var (
	ErrFormat = errors.New("locomo: malformed file")
)

// Category numbers of LoCoMo questions.
const (
	MultiHop    = 1
	Temporal    = 2
	OpenDomain  = 3
	SingleHop   = 4
	Adversarial = 5
)

// CategoryName names a question category.
func CategoryName(c int) string {
	switch c {
	case MultiHop:
		return "multi-hop"
	case Temporal:
		return "temporal"
	case OpenDomain:
		return "open-domain"
	case SingleHop:
		return "single-hop"
	case Adversarial:
		return "adversarial"
	}
	return "category-" + strconv.Itoa(c)
}

// Conversation is one LoCoMo sample.
type Conversation struct {
	ID       string
	Speakers [2]string
	Sessions []Session // in session order
	QA       []Question
}

// Session is one dated sitting of a conversation.
type Session struct {
	N     int       // session number, from 1
	Time  time.Time // zero when the date is missing, unreadable or outside years 1800-2199
	Turns []Turn
}

// Turn is one utterance.
type Turn struct {
	ID      string // "D3:7"
	Speaker string
	Text    string // the utterance, with the image caption appended when present
}

// Question is one QA item.
type Question struct {
	Question string
	Answer   string
	Category int
	Evidence []string // turn ids that resolve, deduplicated, in order
}

// DateLayout is the layout of LoCoMo session dates ("1:56 pm on 8 May, 2023").
const DateLayout = "3:04 pm on 2 January, 2006"

type rawSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []rawQA                    `json:"qa"`
}

type rawQA struct {
	Question string          `json:"question"`
	Answer   json.RawMessage `json:"answer"`
	Evidence []string        `json:"evidence"`
	Category int             `json:"category"`
}

type rawTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

var (
	sessionKey = regexp.MustCompile(`^session_(\d+)$`)
	evidenceID = regexp.MustCompile(`D\d+:\d+`)
)

// Read parses a LoCoMo JSON file (a list of samples).
func Read(r io.Reader) ([]Conversation, error) {
	var raw []rawSample
	dec := json.NewDecoder(r)
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the list of samples", ErrFormat)
	}
	out := make([]Conversation, 0, len(raw))
	for i, s := range raw {
		c, err := convert(s)
		if err != nil {
			return nil, fmt.Errorf("sample %d (%s): %w", i, s.SampleID, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func convert(s rawSample) (Conversation, error) {
	c := Conversation{ID: s.SampleID}
	if err := decodeString(s.Conversation["speaker_a"], &c.Speakers[0]); err != nil {
		return c, err
	}
	if err := decodeString(s.Conversation["speaker_b"], &c.Speakers[1]); err != nil {
		return c, err
	}
	sessions, err := sessionsOf(s.Conversation)
	if err != nil {
		return c, err
	}
	c.Sessions = sessions
	known := map[string]bool{}
	for _, ss := range sessions {
		for _, t := range ss.Turns {
			known[t.ID] = true
		}
	}
	for _, q := range s.QA {
		c.QA = append(c.QA, Question{
			Question: q.Question, Answer: answerText(q.Answer), Category: q.Category,
			Evidence: evidence(q.Evidence, known),
		})
	}
	return c, nil
}

// sessionsOf returns the sessions in number order; keys that give the
// same number ("session_1", "session_01") are ordered by key.
func sessionsOf(conv map[string]json.RawMessage) ([]Session, error) {
	type key struct {
		n int
		k string
	}
	var keys []key
	for k := range conv {
		if m := sessionKey.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			keys = append(keys, key{n, k})
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].n != keys[j].n {
			return keys[i].n < keys[j].n
		}
		return keys[i].k < keys[j].k
	})
	out := make([]Session, 0, len(keys))
	for _, sk := range keys {
		n, k := sk.n, sk.k
		var turns []rawTurn
		if err := json.Unmarshal(conv[k], &turns); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrFormat, k, err)
		}
		s := Session{N: n}
		var date string
		if err := decodeString(conv[k+"_date_time"], &date); err == nil && date != "" {
			s.Time = parseDate(date)
		}
		for _, t := range turns {
			turn, err := convertTurn(t)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			s.Turns = append(s.Turns, turn)
		}
		out = append(out, s)
	}
	return out, nil
}

// parseDate reads a session date; it returns the zero time for an
// unreadable one and for years outside 1800-2199 (records must be dated
// within what the engine accepts).
func parseDate(s string) time.Time {
	t, err := time.Parse(DateLayout, strings.TrimSpace(s))
	if err != nil || t.Year() < 1800 || t.Year() > 2199 {
		return time.Time{}
	}
	return t
}

func convertTurn(t rawTurn) (Turn, error) {
	text := t.Text
	if t.BlipCaption != "" {
		text += " [shares " + t.BlipCaption + "]"
	}
	// encoding/json has already replaced bytes that are not UTF-8 with
	// U+FFFD, so the text is valid.
	return Turn{ID: t.DiaID, Speaker: t.Speaker, Text: text}, nil
}

func decodeString(raw json.RawMessage, dst *string) error {
	if raw == nil {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return nil
}

// answerText renders an answer that may be a string or a number.
func answerText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// evidence extracts the turn ids of a question's evidence, skipping
// malformed strings and ids that name no turn.
func evidence(raw []string, known map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range raw {
		for _, id := range evidenceID.FindAllString(s, -1) {
			if known[id] && !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// SessionOf returns the session number of a turn id ("D3:7" gives 3), or 0.
func SessionOf(turnID string) int {
	s, _, ok := strings.Cut(strings.TrimPrefix(turnID, "D"), ":")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(s)
	return n
}
