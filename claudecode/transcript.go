package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits. Sizes are in bytes.
const (
	// MaxTextBytes is the longest turn text kept; longer texts are cut at a
	// rune boundary and end with TruncatedMark.
	MaxTextBytes = 16 << 10
	// MaxLineBytes is the longest transcript line parsed. Longer lines
	// (pasted images, huge tool outputs) are skipped.
	MaxLineBytes = 16 << 20
	// TruncatedMark ends a text cut to MaxTextBytes.
	TruncatedMark = " …[truncated]"
	// SourcePrefix starts the provenance label of every turn (Turn.Source).
	SourcePrefix = "claude-code:"
)

// Roles of a Turn.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Turn is one prose turn of a transcript.
type Turn struct {
	UUID      string    // the line's uuid; unique across sessions
	SessionID string    // sessionId
	Role      string    // RoleUser or RoleAssistant
	Time      time.Time // timestamp; zero when absent or malformed
	CWD       string    // working directory of the session
	Text      string    // text blocks joined by blank lines
	Offset    int64     // byte offset of the line in the transcript
}

// Source is the turn's provenance label: SourcePrefix and its uuid, or the
// session and byte offset for a line without uuid. It identifies the turn
// across repeated ingestion.
func (t *Turn) Source() string {
	if t.UUID != "" {
		return SourcePrefix + t.UUID
	}
	return SourcePrefix + t.SessionID + "@" + strconv.FormatInt(t.Offset, 10)
}

// entry is the part of a transcript line that ParseLine reads.
type entry struct {
	Type             string   `json:"type"`
	UUID             string   `json:"uuid"`
	SessionID        string   `json:"sessionId"`
	Timestamp        string   `json:"timestamp"`
	CWD              string   `json:"cwd"`
	IsSidechain      bool     `json:"isSidechain"`
	IsMeta           bool     `json:"isMeta"`
	IsCompactSummary bool     `json:"isCompactSummary"`
	Message          *message `json:"message"`
}

type message struct {
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
}

// SyntheticModel is the model Claude Code names on assistant lines it
// writes itself, not the model ("No response requested.", API error
// notices): they are not prose of the session.
const SyntheticModel = "<synthetic>"

type block struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// noise starts texts that are Claude Code's own markup, not prose: slash
// commands and their output, shell escapes, reminders, interruptions.
var noise = []string{
	"<command-", "<local-command-", "<bash-", "<system-reminder>",
	"<user-prompt-submit-hook>", "[Request interrupted", "Caveat: The messages below were generated",
}

// ParseLine decodes one transcript line. It returns ok false, and no
// error, for a valid line that is not a prose turn. Text that is not valid
// UTF-8 is an error.
func ParseLine(line []byte) (t Turn, ok bool, err error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return Turn{}, false, nil
	}
	if !utf8.Valid(line) {
		return Turn{}, false, fmt.Errorf("%w: not valid UTF-8", ErrSyntax)
	}
	var e entry
	if err := json.Unmarshal(line, &e); err != nil {
		return Turn{}, false, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	if (e.Type != RoleUser && e.Type != RoleAssistant) || e.Message == nil ||
		e.IsSidechain || e.IsMeta || e.IsCompactSummary || e.Message.Model == SyntheticModel {
		return Turn{}, false, nil
	}
	texts, err := contentTexts(e.Message.Content)
	if err != nil {
		return Turn{}, false, err
	}
	text := strings.TrimSpace(strings.Join(texts, "\n\n"))
	if text == "" {
		return Turn{}, false, nil
	}
	t = Turn{UUID: e.UUID, SessionID: e.SessionID, Role: e.Type, CWD: e.CWD, Text: truncate(text, MaxTextBytes)}
	if ts, err := time.Parse(time.RFC3339Nano, e.Timestamp); err == nil {
		t.Time = ts.UTC()
	}
	return t, true, nil
}

// contentTexts returns the prose of a message content: a string, or the
// text blocks of an array, without Claude Code's markup.
func contentTexts(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var all []string
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%w: content: %v", ErrSyntax, err)
		}
		all = []string{s}
	} else {
		var blocks []block
		if err := json.Unmarshal(raw, &blocks); err != nil {
			return nil, fmt.Errorf("%w: content: %v", ErrSyntax, err)
		}
		for _, b := range blocks {
			if b.Type == "text" {
				all = append(all, b.Text)
			}
		}
	}
	out := all[:0]
	for _, s := range all {
		if s = strings.TrimSpace(s); s != "" && !isNoise(s) {
			out = append(out, s)
		}
	}
	return out, nil
}

func isNoise(s string) bool {
	for _, p := range noise {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// truncate cuts s to at most max bytes at a rune boundary, marking the cut.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len(TruncatedMark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + TruncatedMark
}
