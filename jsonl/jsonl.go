// Package jsonl reads and writes hmo's interchange format: one JSON object
// per line, {"scope", "session", "time", "role" (or "speaker"), "text",
// "sources"}. What Write produces, Read reads back to the same inputs.
package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/hmo-dev/hmo/engine"
)

// MaxLineBytes is the longest line Read accepts.
const MaxLineBytes = 1 << 20

// Sentinel errors.
var (
	ErrSyntax   = errors.New("jsonl: malformed line")
	ErrLineSize = errors.New("jsonl: line too long")
)

// Line is one record in the interchange format.
type Line struct {
	Scope   string   `json:"scope,omitempty"`
	Session string   `json:"session,omitempty"`
	Time    string   `json:"time,omitempty"` // RFC 3339
	Role    string   `json:"role,omitempty"`
	Speaker string   `json:"speaker,omitempty"` // accepted on input as a synonym of role
	Text    string   `json:"text"`
	Sources []string `json:"sources,omitempty"`
}

// LineError locates a bad line.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Read parses every line of r. Blank lines are skipped. The first bad line
// stops the read with a *LineError.
func Read(r io.Reader) ([]engine.Input, error) {
	ins, _, err := ReadNumbered(r)
	return ins, err
}

// ReadNumbered is Read that also returns the line number (from 1) each
// record was read from, so that a later check can point at its line.
func ReadNumbered(r io.Reader) ([]engine.Input, []int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out []engine.Input
	var lines []int
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err == io.EOF && len(line) == 0 {
			return out, lines, nil
		}
		if err != nil && err != io.EOF {
			return nil, nil, &LineError{n, err}
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		in, perr := Parse(line)
		if perr != nil {
			return nil, nil, &LineError{n, perr}
		}
		out = append(out, in)
		lines = append(lines, n)
	}
}

// readLine returns one line without its newline, refusing lines longer
// than MaxLineBytes. A line that fits in br's buffer is returned in it,
// valid until the next read (Parse keeps no reference to it).
func readLine(br *bufio.Reader) ([]byte, error) {
	chunk, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		line := bytes.TrimRight(chunk, "\r\n")
		if len(line) > MaxLineBytes {
			return nil, ErrLineSize
		}
		return line, err
	}
	buf := slices.Clone(chunk)
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		line := bytes.TrimRight(buf, "\r\n")
		if len(line) > MaxLineBytes {
			return nil, ErrLineSize
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, err
	}
}

// Parse decodes one line: a single JSON object.
func Parse(line []byte) (engine.Input, error) {
	if !utf8.Valid(line) {
		return engine.Input{}, fmt.Errorf("%w: %w", ErrSyntax, engine.ErrInvalidUTF8)
	}
	if t := bytes.TrimSpace(line); len(t) == 0 || t[0] != '{' {
		return engine.Input{}, fmt.Errorf("%w: not a JSON object", ErrSyntax)
	}
	l, ok := parseSimple(line)
	if !ok {
		var err error
		if l, err = parseJSON(line); err != nil {
			return engine.Input{}, err
		}
	}
	return l.input()
}

// parseJSON decodes line, a JSON object, with encoding/json: unknown
// members and trailing data are errors.
func parseJSON(line []byte) (Line, error) {
	var l Line
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return Line{}, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	// More reports false before a stray '}' or ']', so ask for the next
	// token: anything but EOF is trailing data.
	if _, err := dec.Token(); err != io.EOF {
		return Line{}, fmt.Errorf("%w: trailing data", ErrSyntax)
	}
	return l, nil
}

// input is the record l describes.
func (l *Line) input() (engine.Input, error) {
	in := engine.Input{Scope: l.Scope, Session: l.Session, Role: l.Role, Text: l.Text, Sources: l.Sources}
	if in.Role == "" {
		in.Role = l.Speaker
	}
	if l.Time != "" {
		t, err := time.Parse(time.RFC3339Nano, l.Time)
		if err != nil {
			return engine.Input{}, fmt.Errorf("%w: time %q: want RFC 3339, such as 2024-05-01T15:04:05Z or 2024-05-01T17:04:05+02:00", ErrSyntax, l.Time)
		}
		// Writer writes UTC; an offset that pushes the year out of
		// 0000-9999 would not read back.
		if y := t.UTC().Year(); y < 0 || y > 9999 {
			return engine.Input{}, fmt.Errorf("%w: time %q: year outside 0000-9999 in UTC", ErrSyntax, l.Time)
		}
		in.Time = t
	}
	return in, nil
}

// Writer writes records as lines. It is not safe for concurrent use.
type Writer struct {
	enc *json.Encoder
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &Writer{enc: enc}
}

// Write writes one record. A zero time is left out.
func (w *Writer) Write(r *engine.Record) error {
	l := Line{Scope: r.Scope, Session: r.Session, Role: r.Role, Text: r.Text, Sources: r.Sources}
	if !r.Time.IsZero() {
		l.Time = r.Time.UTC().Format(time.RFC3339Nano)
	}
	return w.enc.Encode(l)
}
