package markdown_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/markdown"
)

type wantItem struct {
	text, heading, date string
	line                int
}

func TestParseFiles(t *testing.T) {
	tests := []struct {
		file string
		want []wantItem
	}{
		{"CLAUDE.md", []wantItem{
			{"Tide-table service in Go. Run `make test` before every commit.", "tidepool", "", 6},
			{"Parse NOAA tables with encoding/csv, never regexes.", "tidepool > Conventions", "", 10},
			{"Keep every time in UTC; convert only for display.\nLocal times confuse the cache keys.", "tidepool > Conventions", "", 11},
			{"Wrap errors with %w and a short context.", "tidepool > Conventions", "", 13},
			{"`make build` builds bin/tidepool", "tidepool > Commands", "", 19},
			{"`make test` runs the suite", "tidepool > Commands", "", 20},
			{"```sh\ngo test -race ./...\n```", "tidepool > Commands", "", 22},
			{"[ ] Add the Lisbon station", "tidepool > Commands", "", 28},
		}},
		{"MEMORY.md", []wantItem{
			{"Ana prefers short answers with code first.", "MEMORY.md > Preferences", "", 5},
			{"She drinks tea, never coffee.", "MEMORY.md > Preferences", "", 6},
			{"Chose bbolt over SQLite for the cache.\n- Reason: one static binary.", "MEMORY.md > 2026-02-14 Decisions", "2026-02-14", 10},
		}},
		{"memory/2026-03-02.md", []wantItem{
			{"Moved the cache to ~/.cache/tidepool.", "2026-03-02", "2026-03-02", 3},
			{"Talked about the Porto station; it needs a new CSV column.", "2026-03-02", "2026-03-02", 5},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			items, err := markdown.Parse(f, tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != len(tt.want) {
				t.Fatalf("got %d items, want %d:\n%+v", len(items), len(tt.want), items)
			}
			for i, w := range tt.want {
				got := items[i]
				date := ""
				if !got.Date.IsZero() {
					date = got.Date.Format(time.DateOnly)
				}
				if got.Text != w.text || got.Heading != w.heading || date != w.date || got.Line != w.line {
					t.Errorf("item %d:\n got %q | %q | %q | line %d\nwant %q | %q | %q | line %d",
						i, got.Text, got.Heading, date, got.Line, w.text, w.heading, w.date, w.line)
				}
			}
		})
	}
}

func TestParseBadInput(t *testing.T) {
	if _, err := markdown.Parse(strings.NewReader("- ok\n- \xff\n"), "x.md"); !errors.Is(err, markdown.ErrSyntax) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad UTF-8: got %v, want ErrSyntax at line 2", err)
	}
	long := strings.Repeat("a", markdown.MaxLineBytes+1)
	if _, err := markdown.Parse(strings.NewReader(long), "x.md"); !errors.Is(err, markdown.ErrLineSize) {
		t.Errorf("long line: got %v, want ErrLineSize", err)
	}
	items, err := markdown.Parse(strings.NewReader("\n\n<!--\nall\ncomment\n-->\n---\n"), "x.md")
	if err != nil || len(items) != 0 {
		t.Errorf("comments and rules only: got %v, %v; want no items", items, err)
	}
}

func TestDateFromName(t *testing.T) {
	tests := []struct{ name, want string }{
		{"memory/2026-03-02.md", "2026-03-02"},
		{"2024-02-29.md", "2024-02-29"},
		{"2023-02-29.md", ""},
		{"MEMORY.md", ""},
		{"notes-2026-03-02.md", ""},
	}
	for _, tt := range tests {
		got := markdown.DateFromName(tt.name)
		if s := map[bool]string{true: "", false: got.Format(time.DateOnly)}[got.IsZero()]; s != tt.want {
			t.Errorf("DateFromName(%q) = %q, want %q", tt.name, s, tt.want)
		}
	}
}

// TestWriteParse checks that an export reads back to the same texts,
// scopes and days.
func TestWriteParse(t *testing.T) {
	day := func(d int, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, time.UTC) }
	recs := []engine.Record{
		{ID: 3, Scope: "/home/ana/src/tidepool", Time: day(2, 9), Text: "Use encoding/csv."},
		{ID: 1, Scope: "", Time: day(1, 8), Text: "Ana drinks tea."},
		{ID: 2, Scope: "/home/ana/src/tidepool", Time: day(1, 23), Text: "Cache for 30 days.\n\nCode:\n```go\nx := 1\n```"},
		{ID: 4, Scope: "/home/ana/src/tidepool", Time: day(2, 10), Text: "- nested looking\n  # not a heading"},
		{ID: 5, Scope: "maya", Time: day(3, 0), Text: "Moved to Porto."},
	}
	var buf bytes.Buffer
	if err := markdown.Write(&buf, recs); err != nil {
		t.Fatal(err)
	}
	items, err := markdown.Parse(bytes.NewReader(buf.Bytes()), "export.md")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ scope, day, text string }{
		{"", "2026-03-01", "Ana drinks tea."},
		{"/home/ana/src/tidepool", "2026-03-01", recs[2].Text},
		{"/home/ana/src/tidepool", "2026-03-02", "Use encoding/csv."},
		{"/home/ana/src/tidepool", "2026-03-02", recs[3].Text},
		{"maya", "2026-03-03", "Moved to Porto."},
	}
	if len(items) != len(want) {
		t.Fatalf("read back %d items, want %d:\n%s", len(items), len(want), buf.String())
	}
	for i, w := range want {
		got := items[i]
		if got.Scope != w.scope || got.Date.Format(time.DateOnly) != w.day || got.Text != w.text {
			t.Errorf("item %d: got %q %s %q, want %q %s %q\n%s", i, got.Scope, got.Date.Format(time.DateOnly), got.Text, w.scope, w.day, w.text, buf.String())
		}
	}
}
