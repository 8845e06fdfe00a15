package locomo_test

import (
	"bytes"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/hmo-dev/hmo/locomo"
)

// FuzzLoCoMoRead checks that Read never panics, that evidence only names
// turns of its own conversation, without repeats, and that sessions are in
// number order.
func FuzzLoCoMoRead(f *testing.F) {
	small, err := os.ReadFile("testdata/small.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(small)
	for _, s := range []string{
		`[]`,
		`null`,
		`[{"sample_id":"x","conversation":{"session_1":[{"dia_id":"D1:1","text":"a"}]},"qa":[{"evidence":["D1:1; D1:1","D","D:1:1","D2:1"],"answer":1.5}]}]`,
		`[{"conversation":{"session_2":[{"dia_id":"D2:1"}],"session_02":[{"dia_id":"D2:1"}],"session_2_date_time":"1:56 pm on 8 May, 2023"}}]`,
		`[{"conversation":{"session_99999999999999999999":[]}}]`,
		`[{"qa":[{"answer":{"a":[1]},"category":-1}]}] `,
		"[{\"conversation\":{\"session_1\":[{\"dia_id\":\"D1:1\",\"text\":\"\xff\",\"blip_caption\":\"x\"}]}}]",
		`[{"conversation":{"session_1_date_time":"1:56 pm on 8 May, 0023","session_1":[{"dia_id":"D1:1","text":"a"}]}}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		convs, err := locomo.Read(bytes.NewReader(data))
		if err != nil {
			if convs != nil {
				t.Fatalf("Read returned %d conversations with error %v", len(convs), err)
			}
			return
		}
		for _, c := range convs {
			for _, s := range c.Inputs() {
				for _, in := range s.Inputs {
					if y := in.Time.Year(); y < 1700 || y > 2200 || !utf8.ValidString(in.Text) {
						t.Fatalf("%s: input %+v: want a time the engine accepts and UTF-8 text", c.ID, in)
					}
				}
			}
			turns := map[string]bool{}
			for i, s := range c.Sessions {
				if i > 0 && s.N < c.Sessions[i-1].N {
					t.Fatalf("%s: session %d after session %d", c.ID, s.N, c.Sessions[i-1].N)
				}
				for _, turn := range s.Turns {
					turns[turn.ID] = true
				}
			}
			for _, q := range c.QA {
				seen := map[string]bool{}
				for _, id := range q.Evidence {
					if !turns[id] {
						t.Fatalf("%s: question %q: evidence %q names no turn of the conversation", c.ID, q.Question, id)
					}
					if seen[id] {
						t.Fatalf("%s: question %q: evidence %q repeated", c.ID, q.Question, id)
					}
					seen[id] = true
				}
			}
		}
	})
}
