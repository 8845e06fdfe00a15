package jsonl_test

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/jsonl"
)

var fuzzSeeds = []string{
	`{"scope":"maya","session":"s1","time":"2024-03-02T09:15:00Z","role":"user","text":"Hi!","sources":["D1:1"]}`,
	`{"speaker":"Ann","text":"caf\u00e9 \ud83d\ude00 \ud800"}`,
	`{"time":"2024-03-02T09:15:00.123456789+05:30","text":"x"}`,
	`{"time":"9999-12-31T23:59:59-01:00","text":"x"}`,
	`{"time":"0000-01-01T00:00:00+01:00","text":"x"}`,
	`{"text":"a"}}`,
	`{"text":"a"} {"text":"b"}`,
	`{"TEXT":"upper","Role":"r","sources":[]}`,
	`{"text":"a","text":"b","sources":null}`,
	"{\"text\":\"\xff\"}",
	`null`,
	``,
	"{\"text\":\"a\"}\r\n\r\n{\"text\":\"b\"}\n",
}

// FuzzParse checks that Parse never panics, and that what it accepts has
// valid UTF-8 labels and survives Writer and Parse unchanged.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		in, err := jsonl.Parse(line)
		if err != nil {
			return
		}
		checkUTF8(t, in)
		out := writeInputs(t, in)
		if bytes.Count(out, []byte("\n")) != 1 || out[len(out)-1] != '\n' {
			t.Fatalf("Writer wrote %q for %q, want one line", out, line)
		}
		again, err := jsonl.Parse(out[:len(out)-1])
		if err != nil {
			t.Fatalf("Parse(%q) accepted, but its rewrite %q fails: %v", line, out, err)
		}
		if !sameInput(in, again) {
			t.Fatalf("round trip of %q via %q\n got %+v\nwant %+v", line, out, again, in)
		}
	})
}

// FuzzRead checks that Read never panics on arbitrary bytes, and that what
// it accepts survives Writer and Read unchanged.
func FuzzRead(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte("{\"text\":\"a\"}\n\n{\"text\":\"b\"}\n{\"text\":\"c\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ins, err := jsonl.Read(bytes.NewReader(data))
		if err != nil {
			if ins != nil {
				t.Fatalf("Read returned %d inputs with error %v", len(ins), err)
			}
			return
		}
		if lines := bytes.Count(data, []byte("\n")) + 1; len(ins) > lines {
			t.Fatalf("Read found %d inputs in %d lines", len(ins), lines)
		}
		for _, in := range ins {
			checkUTF8(t, in)
		}
		again, err := jsonl.Read(bytes.NewReader(writeInputs(t, ins...)))
		if err != nil {
			t.Fatalf("rewrite of %q fails to read: %v", data, err)
		}
		if len(again) != len(ins) {
			t.Fatalf("rewrite read %d inputs, want %d", len(again), len(ins))
		}
		for i := range ins {
			if !sameInput(ins[i], again[i]) {
				t.Fatalf("input %d round trip\n got %+v\nwant %+v", i, again[i], ins[i])
			}
		}
	})
}

func checkUTF8(t *testing.T, in engine.Input) {
	t.Helper()
	for _, s := range append([]string{in.Text, in.Scope, in.Session, in.Role}, in.Sources...) {
		if !utf8.ValidString(s) {
			t.Fatalf("Parse accepted invalid UTF-8 %q in %+v", s, in)
		}
	}
}

func writeInputs(t *testing.T, ins ...engine.Input) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	for _, in := range ins {
		r := engine.Record{Scope: in.Scope, Session: in.Session, Role: in.Role, Time: in.Time, Text: in.Text, Sources: in.Sources}
		if err := w.Write(&r); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	return buf.Bytes()
}
