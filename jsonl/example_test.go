package jsonl_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/jsonl"
)

func Example() {
	in := `{"scope":"maya","time":"2024-03-02T10:17:00+01:00","speaker":"user","text":"My cat is called Pixel."}

{"scope":"maya","role":"assistant","text":"Noted."}
`
	ins, err := jsonl.Read(strings.NewReader(in))
	if err != nil {
		fmt.Println(err)
		return
	}
	w := jsonl.NewWriter(os.Stdout)
	for _, in := range ins {
		w.Write(&engine.Record{Scope: in.Scope, Role: in.Role, Time: in.Time, Text: in.Text})
	}
	_, err = jsonl.Read(strings.NewReader(`{"text":"ok"}` + "\n" + `{"text":"hi","mood":"good"}`))
	fmt.Println(err)
	// Output:
	// {"scope":"maya","time":"2024-03-02T09:17:00Z","role":"user","text":"My cat is called Pixel."}
	// {"scope":"maya","role":"assistant","text":"Noted."}
	// line 2: jsonl: malformed line: json: unknown field "mood"
}
