package markdown_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/markdown"
)

// FuzzParse checks that Parse never panics, that its items are valid,
// trimmed UTF-8, and that writing them and parsing the export is stable:
// a second export is byte-identical to the first.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"CLAUDE.md", "MEMORY.md", "memory/2026-03-02.md"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("- a\n\n  b\n\n- c\r\n  ```\n  - x\n\n  ```\n## scope: s\n### 2026-01-01\n- d"))
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := markdown.Parse(bytes.NewReader(data), "2026-01-02.md")
		if err != nil {
			return
		}
		recs := make([]engine.Record, len(items))
		for i, it := range items {
			if it.Text == "" || strings.TrimSpace(it.Text) != it.Text || !utf8.ValidString(it.Text) {
				t.Fatalf("item %d text %q", i, it.Text)
			}
			if it.Line < 1 {
				t.Fatalf("item %d at line %d", i, it.Line)
			}
			recs[i] = engine.Record{ID: uint64(i + 1), Scope: it.Scope, Time: it.Date.Add(time.Duration(i) * time.Second), Text: it.Text}
		}
		first := export(t, recs)
		again, err := markdown.Parse(bytes.NewReader(first), "export.md")
		if err != nil {
			t.Fatalf("export does not parse: %v\n%s", err, first)
		}
		recs2 := make([]engine.Record, len(again))
		for i, it := range again {
			recs2[i] = engine.Record{ID: uint64(i + 1), Scope: it.Scope, Time: it.Date.Add(time.Duration(i) * time.Second), Text: it.Text}
		}
		if second := export(t, recs2); !bytes.Equal(first, second) {
			t.Fatalf("export not stable:\n%s\n---\n%s", first, second)
		}
	})
}

func export(t *testing.T, recs []engine.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := markdown.Write(&buf, recs); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
