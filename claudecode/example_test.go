package claudecode_test

import (
	"fmt"
	"strings"

	"github.com/hmo-dev/hmo/claudecode"
)

func Example() {
	transcript := `{"type":"user","uuid":"u1","timestamp":"2026-03-02T09:15:00Z","message":{"role":"user","content":"Use encoding/csv for the tide tables."}}
{"type":"assistant","uuid":"u2","message":{"role":"assistant","content":[{"type":"thinking","thinking":"..."},{"type":"text","text":"Will do."},{"type":"tool_use","id":"t1","name":"Edit","input":{}}]}}
{"type":"user","uuid":"u3","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}
`
	s := claudecode.NewScanner(strings.NewReader(transcript), nil)
	for s.Scan() {
		t := s.Turn()
		fmt.Printf("%s %s: %s\n", t.Source(), t.Role, t.Text)
	}
	fmt.Println("resume at byte", s.Offset())
	// Output:
	// claude-code:u1 user: Use encoding/csv for the tide tables.
	// claude-code:u2 assistant: Will do.
	// resume at byte 464
}
