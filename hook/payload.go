package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// Claude Code hook events handled by Claude.
const (
	EventSessionStart     = "SessionStart"
	EventUserPromptSubmit = "UserPromptSubmit"
	EventStop             = "Stop"
	EventPreCompact       = "PreCompact"
	EventPostCompact      = "PostCompact"
	EventSessionEnd       = "SessionEnd"
)

// Events lists the events Claude handles, in session order.
var Events = []string{EventSessionStart, EventUserPromptSubmit, EventStop, EventPreCompact, EventPostCompact, EventSessionEnd}

// Payload is the JSON Claude Code writes to a hook's stdin: the common
// fields and those of the events hmo handles. Other fields are ignored.
type Payload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode,omitempty"`
	// Prompt is the user's prompt (UserPromptSubmit).
	Prompt string `json:"prompt,omitempty"`
	// Source is how the session started (SessionStart): startup, resume,
	// clear or compact.
	Source string `json:"source,omitempty"`
	// Trigger is manual or auto (PreCompact, PostCompact).
	Trigger            string `json:"trigger,omitempty"`
	CustomInstructions string `json:"custom_instructions,omitempty"`
	// CompactSummary is the summary the compaction wrote (PostCompact).
	CompactSummary string `json:"compact_summary,omitempty"`
	// Reason is why the session ended (SessionEnd): clear, logout,
	// prompt_input_exit, other...
	Reason string `json:"reason,omitempty"`
	// StopHookActive is set when Claude continues because of a Stop hook.
	StopHookActive bool `json:"stop_hook_active,omitempty"`
}

// ParsePayload reads one hook payload: a JSON object of at most
// MaxPayloadBytes with valid UTF-8.
func ParsePayload(r io.Reader) (Payload, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxPayloadBytes+1))
	if err != nil {
		return Payload{}, fmt.Errorf("%w: %v", ErrPayload, err)
	}
	if len(data) > MaxPayloadBytes {
		return Payload{}, fmt.Errorf("%w: more than %d bytes", ErrPayload, MaxPayloadBytes)
	}
	if !utf8.Valid(data) {
		return Payload{}, fmt.Errorf("%w: not valid UTF-8", ErrPayload)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return Payload{}, fmt.Errorf("%w: not a JSON object", ErrPayload)
	}
	var p Payload
	if err := json.Unmarshal(data, &p); err != nil {
		return Payload{}, fmt.Errorf("%w: %v", ErrPayload, err)
	}
	return p, nil
}
