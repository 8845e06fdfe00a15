package claudecode_test

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hmo-dev/hmo/claudecode"
)

func addSeeds(f *testing.F) {
	data, err := os.ReadFile(sample)
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range bytes.Split(data, []byte("\n")) {
		f.Add(l)
	}
	f.Add(data)
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"\ud800"}]}}`))
	f.Add([]byte("{\"type\":\"user\",\"message\":{\"content\":\"a\"}}\r\n\n{\"type\""))
}

// FuzzParseLine checks that ParseLine never panics and that what it
// accepts is valid UTF-8 prose within the size limit.
func FuzzParseLine(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, line []byte) {
		turn, ok, err := claudecode.ParseLine(line)
		if err != nil || !ok {
			if ok {
				t.Fatalf("ok with error %v", err)
			}
			return
		}
		if turn.Text == "" || strings.TrimSpace(turn.Text) != turn.Text {
			t.Fatalf("accepted text %q", turn.Text)
		}
		if !utf8.ValidString(turn.Text) || len(turn.Text) > claudecode.MaxTextBytes {
			t.Fatalf("text of %d bytes, valid UTF-8 %v", len(turn.Text), utf8.ValidString(turn.Text))
		}
		if turn.Role != claudecode.RoleUser && turn.Role != claudecode.RoleAssistant {
			t.Fatalf("role %q", turn.Role)
		}
	})
}

// FuzzScanner checks that a lenient scan never panics, never reads past
// its input, and that resuming from any reported offset finds the same
// remaining turns.
func FuzzScanner(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s := claudecode.NewScanner(bytes.NewReader(data), nil)
		var all []claudecode.Turn
		for s.Scan() {
			all = append(all, s.Turn())
		}
		if s.Err() != nil {
			t.Fatalf("lenient scan failed: %v", s.Err())
		}
		if s.Offset() > int64(len(data)) {
			t.Fatalf("offset %d past %d bytes", s.Offset(), len(data))
		}
		if len(all) == 0 {
			return
		}
		mid := all[len(all)/2].Offset
		r := claudecode.NewScanner(bytes.NewReader(data[mid:]), &claudecode.ScanOptions{Offset: mid})
		var rest []claudecode.Turn
		for r.Scan() {
			rest = append(rest, r.Turn())
		}
		want := all[len(all)/2:]
		if len(rest) != len(want) {
			t.Fatalf("resume at %d found %d turns, want %d", mid, len(rest), len(want))
		}
		for i := range rest {
			if rest[i].Offset != want[i].Offset || rest[i].Text != want[i].Text {
				t.Fatalf("resumed turn %d: %+v, want %+v", i, rest[i], want[i])
			}
		}
	})
}
