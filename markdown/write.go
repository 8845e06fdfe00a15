package markdown

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hmo-dev/hmo/engine"
)

// Title is the first heading of a Markdown export.
const Title = "hmo memories"

// Write renders recs, in any order, as one Markdown document: a section
// per scope ("## scope: NAME", records without scope first, under no
// scope heading), a subsection per day of event time ("### 2024-03-02",
// UTC), and one list item per record in time order.
func Write(w io.Writer, recs []engine.Record) error {
	sorted := slices.Clone(recs)
	slices.SortStableFunc(sorted, func(a, b engine.Record) int {
		return cmp.Or(cmp.Compare(a.Scope, b.Scope), a.Time.Compare(b.Time), cmp.Compare(a.ID, b.ID))
	})
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s\n", Title)
	scope, day := "\x00", ""
	for i := range sorted {
		r := &sorted[i]
		if r.Scope != scope {
			scope, day = r.Scope, ""
			if scope != "" {
				fmt.Fprintf(bw, "\n## scope: %s\n", oneLine(scope))
			}
		}
		if d := r.Time.UTC().Format("2006-01-02"); d != day {
			day = d
			fmt.Fprintf(bw, "\n### %s\n\n", day)
		}
		writeItem(bw, r.Text)
	}
	return bw.Flush()
}

// writeItem writes text as a list item, continuation lines indented.
func writeItem(w *bufio.Writer, text string) {
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n")), "\n")
	w.WriteString("- " + lines[0] + "\n")
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			w.WriteString("\n")
			continue
		}
		w.WriteString("  " + l + "\n")
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
