package engine

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Tier numbers. Every record is in the archive (TierArchive); the active
// tiers are views over it.
const (
	TierCache   uint8 = 1 // Tier 1: RAM cache
	TierBuffer  uint8 = 2 // Tier 2: buffer
	TierArchive uint8 = 3 // Tier 3: archive
)

// Header is the HMO header H = {I0, n, t_last, P, tier} of a record.
type Header struct {
	I0       float64   `json:"i0"`     // initial importance on [1, 10]
	N        uint32    `json:"n"`      // recall count
	LastUsed time.Time `json:"t_last"` // last access (event time at ingestion)
	P        float64   `json:"p"`      // priority score
	Tier     uint8     `json:"tier"`   // current tier (1, 2 or 3)
}

// Record is one memory segment, as stored.
type Record struct {
	ID          uint64    `json:"id"`
	Scope       string    `json:"scope,omitempty"`
	Session     string    `json:"session,omitempty"`
	Role        string    `json:"role,omitempty"`
	Time        time.Time `json:"time"`    // event time: the conversation's own time
	Created     time.Time `json:"created"` // when the record was committed (engine clock)
	Text        string    `json:"text"`
	Summary     string    `json:"summary,omitempty"`      // compressed representation
	SummaryKind string    `json:"summary_kind,omitempty"` // semantic, episodic or core
	Sources     []string  `json:"sources,omitempty"`      // provenance, e.g. dataset turn ids
	Prev        uint64    `json:"prev,omitempty"`         // previous record of the same session
	// Supersedes is the older version this record replaced (see Update).
	Supersedes uint64 `json:"supersedes,omitempty"`
	// SupersededBy is set on history versions: the record that replaced it.
	SupersededBy uint64 `json:"superseded_by,omitempty"`
	Header       Header `json:"header"`
}

// Input is a record to remember.
type Input struct {
	Scope   string    `json:"scope,omitempty"`
	Session string    `json:"session,omitempty"`
	Role    string    `json:"role,omitempty"`
	Time    time.Time `json:"time,omitzero"` // zero means now (engine clock)
	Text    string    `json:"text"`
	Sources []string  `json:"sources,omitempty"`
}

// validate checks an input against the limits in opts.
func (in *Input) validate(opts *Options) error {
	if !utf8.ValidString(in.Text) {
		return ErrInvalidUTF8
	}
	if strings.TrimSpace(in.Text) == "" {
		return ErrEmptyText
	}
	if len(in.Text) > opts.MaxTextBytes {
		return fmt.Errorf("%w: text is %d bytes, limit %d", ErrTooLarge, len(in.Text), opts.MaxTextBytes)
	}
	if !in.Time.IsZero() && (in.Time.Year() < 1700 || in.Time.Year() > 2200) {
		return fmt.Errorf("%w: time %s outside years 1700-2200", ErrInvalidInput, in.Time.Format(time.RFC3339))
	}
	labels := append([]string{in.Scope, in.Session, in.Role}, in.Sources...)
	for _, l := range labels {
		if !utf8.ValidString(l) {
			return fmt.Errorf("%w: label %q", ErrInvalidUTF8, l)
		}
		if len(l) > DefaultMaxLabelBytes {
			return fmt.Errorf("%w: label is %d bytes, limit %d", ErrTooLarge, len(l), DefaultMaxLabelBytes)
		}
		if strings.ContainsRune(l, 0) {
			return fmt.Errorf("%w: label contains NUL", ErrInvalidInput)
		}
	}
	return nil
}

// Validate checks an input against the store's limits without storing it.
func (e *Engine) Validate(in *Input) error { return in.validate(e.opts) }
