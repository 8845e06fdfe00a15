package longmemeval_test

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/longmemeval"
)

// FuzzRead checks that Read never panics, that ids are unique, that answer
// sessions name sessions of their haystack, that turn ids belong to their
// session and no turn is blank, and that Inputs keeps every turn once, in
// non-decreasing time.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"../testdata/longmemeval-small.json", "../testdata/longmemeval-oracle-small.json"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`[]`,
		`null`,
		`[{"question_id":"q","haystack_sessions":[[{"role":"user","content":"a","has_answer":true}]],"haystack_session_ids":["s"],"haystack_dates":["2023/05/20 (Sat) 02:21"],"answer_session_ids":["s","s",1]}]`,
		`[{"question_id":"q","haystack_sessions":[[],[]],"haystack_session_ids":["a","b"],"haystack_dates":["9999/99/99 (Xyz) 99:99","0001/01/01 (Mon) 00:00"]}]`,
		`[{"question_id":"q_abs","answer":{"x":[1]},"haystack_sessions":[[{"content":" "}]],"haystack_session_ids":[""]}]`,
		"[{\"question_id\":\"\xff\",\"haystack_sessions\":[[{\"content\":\"\xfe\"}]],\"haystack_session_ids\":[\"\xff\"]}]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		qs, err := longmemeval.Read(bytes.NewReader(data))
		if err != nil {
			if qs != nil {
				t.Fatalf("Read returned %d questions with error %v", len(qs), err)
			}
			return
		}
		ids := map[string]bool{}
		for _, q := range qs {
			if ids[q.ID] {
				t.Fatalf("question id %q twice", q.ID)
			}
			ids[q.ID] = true
			sessions := map[string]bool{}
			turns := 0
			for _, s := range q.Sessions {
				sessions[s.ID] = true
				for _, turn := range s.Turns {
					turns++
					if !strings.HasPrefix(turn.ID, s.ID+"_") || strings.TrimSpace(turn.Content) == "" {
						t.Fatalf("%s: turn %+v of session %q", q.ID, turn, s.ID)
					}
				}
			}
			for _, a := range q.AnswerSessions {
				if !sessions[a] {
					t.Fatalf("%s: answer session %q is not in the haystack", q.ID, a)
				}
			}
			n := 0
			var last time.Time
			for _, s := range q.Inputs() {
				for _, in := range s.Inputs {
					n++
					if in.Time.Before(last) || in.Time.Year() < 1700 || in.Time.Year() > 2200 {
						t.Fatalf("%s: input time %v after %v: want non-decreasing, within 1700-2200", q.ID, in.Time, last)
					}
					last = in.Time
				}
			}
			if n != turns {
				t.Fatalf("%s: Inputs gives %d records for %d turns", q.ID, n, turns)
			}
		}
	})
}
