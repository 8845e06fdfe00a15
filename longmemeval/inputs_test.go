package longmemeval_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/longmemeval"
)

func TestInputs(t *testing.T) {
	const data = `[{"question_id": "q1", "haystack_session_ids": ["late", "undated", "early", "overlap", "empty"],
	  "haystack_dates": ["2023/05/20 (Sat) 10:00", "", "2023/05/01 (Mon) 09:00", "2023/05/01 (Mon) 09:00", "2023/05/02 (Tue) 08:00"],
	  "haystack_sessions": [
	    [{"role": "user", "content": "late 1"}, {"role": "assistant", "content": "late 2"}],
	    [{"role": "user", "content": "undated 1"}],
	    [{"role": "user", "content": "early 1"}, {"role": "assistant", "content": "early 2"}],
	    [{"role": "user", "content": "overlap 1"}],
	    []],
	  "answer_session_ids": ["late"]}]`
	qs, err := longmemeval.Read(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	// Date order: early and overlap (same date, file order), empty, then
	// late and the undated session that follows it in the file.
	type rec struct {
		session, role, text, source string
		at                          string
	}
	var got []rec
	var order []string
	for _, s := range qs[0].Inputs() {
		order = append(order, s.Session.ID)
		for _, in := range s.Inputs {
			if in.Scope != "q1" || len(in.Sources) != 1 {
				t.Errorf("input %+v: want scope q1 and one source", in)
			}
			got = append(got, rec{in.Session, in.Role, in.Text, in.Sources[0], in.Time.Format("01-02 15:04:05")})
		}
		if n := len(s.Inputs); n > 0 && !s.End.After(s.Inputs[n-1].Time) {
			t.Errorf("session %s ends at %v, before its last turn", s.Session.ID, s.End)
		}
	}
	if want := "early overlap empty late undated"; strings.Join(order, " ") != want {
		t.Errorf("session order %v, want %s", order, want)
	}
	want := []rec{
		{"early", "user", "early 1", "early_1", "05-01 09:00:00"},
		{"early", "assistant", "early 2", "early_2", "05-01 09:00:30"},
		{"overlap", "user", "overlap 1", "overlap_1", "05-01 09:01:00"}, // dated inside early: starts where early ends
		{"late", "user", "late 1", "late_1", "05-20 10:00:00"},
		{"late", "assistant", "late 2", "late_2", "05-20 10:00:30"},
		{"undated", "user", "undated 1", "undated_1", "05-20 11:01:00"}, // an hour after late ends
	}
	if len(got) != len(want) {
		t.Fatalf("inputs\n got %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("input %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestInputsUndated(t *testing.T) {
	const data = `[{"question_id": "q", "haystack_session_ids": ["a", "b"],
	  "haystack_sessions": [[{"role": "user", "content": "one"}], [{"role": "user", "content": "two"}]]}]`
	qs, err := longmemeval.Read(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	in := qs[0].Inputs()
	a, b := in[0].Inputs[0].Time, in[1].Inputs[0].Time
	if !a.Equal(time.Date(2000, 1, 1, 1, 0, 0, 0, time.UTC)) || !b.After(a) {
		t.Errorf("undated haystack at %v then %v, want 2000-01-01 01:00 then later", a, b)
	}
}
