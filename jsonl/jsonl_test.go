package jsonl_test

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/jsonl"
)

func TestParse(t *testing.T) {
	may := time.Date(2024, 5, 1, 9, 30, 0, 0, time.UTC)
	tests := []struct {
		name string
		line string
		want engine.Input
	}{
		{"all fields", `{"scope":"s","session":"x","time":"2024-05-01T09:30:00Z","role":"user","text":"hi","sources":["D1:1","D1:2"]}`,
			engine.Input{Scope: "s", Session: "x", Time: may, Role: "user", Text: "hi", Sources: []string{"D1:1", "D1:2"}}},
		{"text only", `{"text":"hi"}`, engine.Input{Text: "hi"}},
		{"speaker is a synonym of role", `{"speaker":"Ann","text":"hi"}`, engine.Input{Role: "Ann", Text: "hi"}},
		{"role wins over speaker", `{"role":"user","speaker":"Ann","text":"hi"}`, engine.Input{Role: "user", Text: "hi"}},
		{"offset time", `{"time":"2024-05-01T11:30:00+02:00","text":"hi"}`, engine.Input{Time: may, Text: "hi"}},
		{"fractional seconds", `{"time":"2024-05-01T09:30:00.123456789Z","text":"hi"}`,
			engine.Input{Time: may.Add(123456789 * time.Nanosecond), Text: "hi"}},
		{"surrounding space", " \t{\"text\":\"hi\"}  ", engine.Input{Text: "hi"}},
		{"escapes", `{"text":"caf\u00e9 \"q\" \n"}`, engine.Input{Text: "café \"q\" \n"}},
		{"empty text parses (the engine rejects it)", `{"text":""}`, engine.Input{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jsonl.Parse([]byte(tt.line))
			if err != nil {
				t.Fatalf("Parse(%s): %v", tt.line, err)
			}
			if !sameInput(got, tt.want) {
				t.Errorf("Parse(%s)\n got %+v\nwant %+v", tt.line, got, tt.want)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, line string
		want       error  // matched with errors.Is
		msg        string // in the message
	}{
		{"empty", ``, jsonl.ErrSyntax, "not a JSON object"},
		{"not json", `hello`, jsonl.ErrSyntax, "not a JSON object"},
		{"null", `null`, jsonl.ErrSyntax, "not a JSON object"},
		{"array", `[{"text":"hi"}]`, jsonl.ErrSyntax, "not a JSON object"},
		{"truncated", `{"text":"hi"`, jsonl.ErrSyntax, "EOF"},
		{"unknown field", `{"text":"hi","mood":"happy"}`, jsonl.ErrSyntax, `unknown field "mood"`},
		{"wrong type", `{"text":42}`, jsonl.ErrSyntax, "text"},
		{"sources not a list", `{"text":"hi","sources":"D1:1"}`, jsonl.ErrSyntax, "sources"},
		{"second object", `{"text":"a"} {"text":"b"}`, jsonl.ErrSyntax, "trailing data"},
		{"trailing word", `{"text":"a"} x`, jsonl.ErrSyntax, "trailing data"},
		{"stray brace", `{"text":"a"}}`, jsonl.ErrSyntax, "trailing data"},
		{"stray bracket", `{"text":"a"}]`, jsonl.ErrSyntax, "trailing data"},
		{"bad time", `{"text":"hi","time":"yesterday"}`, jsonl.ErrSyntax, "time"},
		{"date without clock", `{"text":"hi","time":"2024-05-01"}`, jsonl.ErrSyntax, "time"},
		{"year out of range in UTC", `{"text":"hi","time":"0000-01-01T00:00:00+01:00"}`, jsonl.ErrSyntax, "year outside"},
		{"invalid UTF-8", "{\"text\":\"caf\xe9\"}", engine.ErrInvalidUTF8, "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := jsonl.Parse([]byte(tt.line))
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want an error", tt.line, in)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("Parse(%q) error %v, want one matching %v", tt.line, err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Parse(%q) error %q, want it to mention %q", tt.line, err, tt.msg)
			}
		})
	}
}

func TestRead(t *testing.T) {
	tests := []struct {
		name, data string
		want       []string // texts, in order
	}{
		{"empty input", "", nil},
		{"one line, no newline", `{"text":"a"}`, []string{"a"}},
		{"blank lines skipped", "\n{\"text\":\"a\"}\n\n   \n\t\n{\"text\":\"b\"}\n\n", []string{"a", "b"}},
		{"CRLF", "{\"text\":\"a\"}\r\n{\"text\":\"b\"}\r\n", []string{"a", "b"}},
		{"CRLF blank line", "{\"text\":\"a\"}\r\n\r\n{\"text\":\"b\"}", []string{"a", "b"}},
		{"newline inside text is escaped", `{"text":"a\nb"}` + "\n", []string{"a\nb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ins, err := jsonl.Read(strings.NewReader(tt.data))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			var got []string
			for _, in := range ins {
				got = append(got, in.Text)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Read texts = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReadLineErrors(t *testing.T) {
	tests := []struct {
		name, data string
		line       int
		want       error
	}{
		{"malformed third line", "{\"text\":\"a\"}\n{\"text\":\"b\"}\n{\"text\":\n", 3, jsonl.ErrSyntax},
		{"blank lines count", "\n\n{\"text\":\"a\"}\n{oops}\n", 4, jsonl.ErrSyntax},
		{"CRLF lines count", "{\"text\":\"a\"}\r\n\r\n{\"text\":\"b\",\"x\":1}\r\n", 3, jsonl.ErrSyntax},
		{"unknown field", "{\"text\":\"a\",\"tags\":[]}\n", 1, jsonl.ErrSyntax},
		{"invalid UTF-8", "{\"text\":\"a\"}\n{\"text\":\"\xff\"}\n", 2, engine.ErrInvalidUTF8},
		{"trailing data", "{\"text\":\"a\"}\n{\"text\":\"b\"}}\n", 2, jsonl.ErrSyntax},
		{"line too long", "{\"text\":\"a\"}\n" + strings.Repeat(" ", jsonl.MaxLineBytes+1) + "\n", 2, jsonl.ErrLineSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ins, err := jsonl.Read(strings.NewReader(tt.data))
			if err == nil {
				t.Fatalf("Read = %d inputs, want an error", len(ins))
			}
			if ins != nil {
				t.Errorf("Read returned %d inputs with its error, want none", len(ins))
			}
			var le *jsonl.LineError
			if !errors.As(err, &le) {
				t.Fatalf("Read error %v (%T), want a *jsonl.LineError", err, err)
			}
			if le.Line != tt.line {
				t.Errorf("LineError.Line = %d, want %d (%v)", le.Line, tt.line, err)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("Read error %v, want one matching %v", err, tt.want)
			}
			if want := "line " + strconv.Itoa(tt.line) + ":"; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Read error %q, want it to start with %q", err, want)
			}
		})
	}
}

// TestReadLineLimit checks the boundary: a line of exactly MaxLineBytes
// is read, with or without its newline, and one byte more is refused.
func TestReadLineLimit(t *testing.T) {
	line := func(n int) string {
		const head, tail = `{"text":"`, `"}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	tests := []struct {
		name, data string
		wantErr    bool
	}{
		{"limit, LF", line(jsonl.MaxLineBytes) + "\n", false},
		{"limit, CRLF", line(jsonl.MaxLineBytes) + "\r\n", false},
		{"limit, EOF", line(jsonl.MaxLineBytes), false},
		{"limit+1, LF", line(jsonl.MaxLineBytes+1) + "\n", true},
		{"limit+1, EOF", line(jsonl.MaxLineBytes + 1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ins, err := jsonl.Read(strings.NewReader(tt.data))
			if tt.wantErr {
				if !errors.Is(err, jsonl.ErrLineSize) {
					t.Fatalf("Read error %v, want ErrLineSize", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if len(ins) != 1 || len(ins[0].Text) != jsonl.MaxLineBytes-11 {
				t.Errorf("Read = %d inputs, want 1 with %d bytes of text", len(ins), jsonl.MaxLineBytes-11)
			}
		})
	}
}

// errReader fails after its data.
type errReader struct {
	data []byte
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReadIOError(t *testing.T) {
	boom := errors.New("disk on fire")
	_, err := jsonl.Read(&errReader{data: []byte("{\"text\":\"a\"}\n{\"te"), err: boom})
	if !errors.Is(err, boom) {
		t.Fatalf("Read error %v, want %v", err, boom)
	}
	var le *jsonl.LineError
	if !errors.As(err, &le) || le.Line != 2 {
		t.Errorf("Read error %v, want a LineError on line 2", err)
	}
}

func TestWriterRoundTrip(t *testing.T) {
	recs := []engine.Record{
		{ID: 7, Scope: "maya", Session: "s1", Role: "user", Time: time.Date(2024, 3, 2, 9, 15, 0, 5, time.UTC),
			Text: "Pixel <3 & \"sun\"\nline two \u2028", Sources: []string{"D1:1"}, Header: engine.Header{I0: 9}},
		{Time: time.Date(2024, 3, 2, 11, 15, 0, 0, time.FixedZone("CEST", 2*3600)), Text: "offset becomes UTC"},
		{Text: "no time"},
	}
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(recs) {
		t.Fatalf("wrote %d lines, want %d:\n%s", len(lines), len(recs), buf.String())
	}
	wantLines := []string{
		`{"scope":"maya","session":"s1","time":"2024-03-02T09:15:00.000000005Z","role":"user","text":"Pixel <3 & \"sun\"\nline two \u2028","sources":["D1:1"]}`,
		`{"time":"2024-03-02T09:15:00Z","text":"offset becomes UTC"}`,
		`{"text":"no time"}`,
	}
	for i := range lines {
		if lines[i] != wantLines[i] {
			t.Errorf("line %d\n got %s\nwant %s", i+1, lines[i], wantLines[i])
		}
	}
	ins, err := jsonl.Read(&buf)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	for i, r := range recs {
		want := engine.Input{Scope: r.Scope, Session: r.Session, Role: r.Role, Time: r.Time, Text: r.Text, Sources: r.Sources}
		if !sameInput(ins[i], want) {
			t.Errorf("record %d read back as %+v, want %+v", i, ins[i], want)
		}
	}
}

// TestWriterError reports the underlying writer's error.
func TestWriterError(t *testing.T) {
	w := jsonl.NewWriter(failWriter{})
	if err := w.Write(&engine.Record{Text: "x"}); !errors.Is(err, io.ErrShortWrite) {
		t.Errorf("Write error %v, want %v", err, io.ErrShortWrite)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrShortWrite }

// sameInput compares inputs, times by instant and sources by content.
func sameInput(a, b engine.Input) bool {
	return a.Scope == b.Scope && a.Session == b.Session && a.Role == b.Role && a.Text == b.Text &&
		a.Time.Equal(b.Time) && len(a.Sources) == len(b.Sources) &&
		(len(a.Sources) == 0 || reflect.DeepEqual(a.Sources, b.Sources))
}

// TestReadNumbered checks the line numbers given with the records, blank
// lines counted, and that a bad time is explained without Go's layout.
func TestReadNumbered(t *testing.T) {
	ins, lines, err := jsonl.ReadNumbered(strings.NewReader("\n{\"text\":\"a\"}\n\n  \n{\"text\":\"b\"}\n"))
	if err != nil || len(ins) != 2 || len(lines) != 2 || lines[0] != 2 || lines[1] != 5 {
		t.Fatalf("ReadNumbered = %v, lines %v, %v; want 2 records on lines 2 and 5", ins, lines, err)
	}
	_, err = jsonl.Parse([]byte(`{"text":"hi","time":"last Tuesday"}`))
	if err == nil || strings.Contains(err.Error(), "2006") || !strings.Contains(err.Error(), `"last Tuesday"`) || !strings.Contains(err.Error(), "RFC 3339") {
		t.Errorf("bad time: %v; want the value and RFC 3339 named, not Go's layout", err)
	}
}
