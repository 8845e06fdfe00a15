package jsonl_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/jsonl"
)

// simpleCases are lines of every shape: those the simple decoder must
// take (simple true), and those it must leave to encoding/json.
var simpleCases = []struct {
	line   string
	simple bool
}{
	{`{"scope":"maya","session":"s1","time":"2024-03-02T09:15:00Z","role":"user","text":"Hi!","sources":["D1:1"]}`, true},
	{`{"text":"a"}`, true},
	{`{}`, true},
	{` { "text" : "a b" , "sources" : [ "x" , "y" ] } `, true},
	{"{\t\"text\":\"a\"\r\n}", true},
	{`{"text":"","sources":[]}`, true},
	{`{"speaker":"Ann","text":"café 😀"}`, true},
	{`{"text":"tab	inside"}`, false},          // a control character: encoding/json refuses it
	{`{"text":"caf\u00e9"}`, false},           // an escape
	{`{"text":"a\"b"}`, false},                // an escaped quote
	{`{"te\u0078t":"a"}`, false},              // an escaped name
	{`{"TEXT":"upper","Role":"r"}`, false},    // encoding/json matches names in any case
	{`{"text":"a","text":"b"}`, false},        // a repeated member
	{`{"text":"a","sources":null}`, false},    // null
	{`{"text":null}`, false},                  // null
	{`{"text":1}`, false},                     // not a string
	{`{"text":"a","extra":"b"}`, false},       // an unknown member
	{`{"text":"a"}}`, false},                  // trailing data
	{`{"text":"a"} {"text":"b"}`, false},      // two objects
	{`{"text":"a",}`, false},                  // a trailing comma
	{`{"text":"a"`, false},                    // unclosed
	{`{"text":"a}`, false},                    // unclosed string
	{`{"sources":["a",]}`, false},             // a trailing comma in the array
	{`{"sources":["a" "b"]}`, false},          // a missing comma
	{`{"sources":"a"}`, false},                // not an array
	{`{"text" "a"}`, false},                   // no colon
	{`{,"text":"a"}`, false},                  // a leading comma
	{`{"time":"2024-03-02T09:15:00Z"}`, true}, // the time's check is Parse's, after either decoder
}

// TestParseSimpleAsJSON checks the simple decoder on lines of every
// shape: it takes the common ones, and what it takes encoding/json
// decodes to the same Line.
func TestParseSimpleAsJSON(t *testing.T) {
	for _, c := range simpleCases {
		got, ok := jsonl.ParseSimple([]byte(c.line))
		if ok != c.simple {
			t.Errorf("ParseSimple(%q) took it: %v, want %v", c.line, ok, c.simple)
		}
		if !ok {
			continue
		}
		want, err := jsonl.ParseJSON([]byte(c.line))
		if err != nil {
			t.Errorf("ParseSimple(%q) took what encoding/json refuses: %v", c.line, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ParseSimple(%q)\n got %#v\nwant %#v", c.line, got, want)
		}
	}
}

// TestParseSimpleTakesWritersLines checks that every line Writer writes
// for plain texts is read by the simple decoder, to the same input.
func TestParseSimpleTakesWritersLines(t *testing.T) {
	at := time.Date(2024, 5, 1, 15, 4, 5, 123, time.UTC)
	ins := []engine.Input{
		{Scope: "maya", Session: "s1", Role: "user", Time: at, Text: "on saturday emma painted the roof in dublin", Sources: []string{"D1:1", "D1:2"}},
		{Text: "no time, no scope"},
		{Scope: "x", Text: "unicode: café 😀 日本"},
	}
	out := writeInputs(t, ins...)
	for i, line := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		if _, ok := jsonl.ParseSimple(line); !ok {
			t.Errorf("ParseSimple did not take Writer's line %q", line)
		}
		in, err := jsonl.Parse(line)
		if err != nil || !sameInput(in, ins[i]) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", line, in, err, ins[i])
		}
	}
}

// FuzzParseSimple checks that whatever the simple decoder takes,
// encoding/json decodes to the same Line.
func FuzzParseSimple(f *testing.F) {
	for _, c := range simpleCases {
		f.Add([]byte(c.line))
	}
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"scope":"s","session":"t","time":"x","role":"r","speaker":"p","text":"` + strings.Repeat("w ", 40) + `","sources":["a","b","c"]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		if !utf8.Valid(line) {
			return // Parse refuses it before either decoder
		}
		got, ok := jsonl.ParseSimple(line)
		if !ok {
			return
		}
		want, err := jsonl.ParseJSON(line)
		if err != nil {
			t.Fatalf("ParseSimple(%q) took what encoding/json refuses: %v", line, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ParseSimple(%q)\n got %#v\nwant %#v", line, got, want)
		}
	})
}

// BenchmarkParse decodes Writer's lines of short records (the synthetic
// stream's shape) with Parse and with encoding/json alone.
func BenchmarkParse(b *testing.B) {
	var ins []engine.Input
	at := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		ins = append(ins, engine.Input{Scope: "synthetic", Session: "s" + string(rune('0'+i%10)), Role: "user", Time: at.Add(time.Duration(i) * time.Minute),
			Text: "on saturday emma painted the roof in dublin and felt tired about the sweater"})
	}
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	for _, in := range ins {
		r := engine.Record{Scope: in.Scope, Session: in.Session, Role: in.Role, Time: in.Time, Text: in.Text}
		if err := w.Write(&r); err != nil {
			b.Fatal(err)
		}
	}
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			for _, l := range lines {
				if _, err := jsonl.Parse(l); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/line")
	})
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			for _, l := range lines {
				if _, err := jsonl.ParseJSON(l); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/line")
	})
}
