package markdown_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/markdown"
)

func Example() {
	note := "# Tuesday\n\n- Ana moved to Porto.\n- She prefers tea.\n  Green, no sugar.\n"
	items, _ := markdown.Parse(strings.NewReader(note), "memory/2026-03-02.md")
	var recs []engine.Record
	for i, it := range items {
		fmt.Printf("%s line %d: %q\n", it.Date.Format(time.DateOnly), it.Line, it.Text)
		recs = append(recs, engine.Record{ID: uint64(i + 1), Scope: "ana", Time: it.Date, Text: it.Text})
	}
	markdown.Write(os.Stdout, recs)
	// Output:
	// 2026-03-02 line 3: "Ana moved to Porto."
	// 2026-03-02 line 4: "She prefers tea.\nGreen, no sugar."
	// # hmo memories
	//
	// ## scope: ana
	//
	// ### 2026-03-02
	//
	// - Ana moved to Porto.
	// - She prefers tea.
	//   Green, no sugar.
}
