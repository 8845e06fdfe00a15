package longmemeval_test

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/longmemeval"
)

func readFile(t *testing.T, name string) []longmemeval.Question {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	qs, err := longmemeval.Read(f)
	if err != nil {
		t.Fatalf("Read %s: %v", name, err)
	}
	return qs
}

func TestReadFixture(t *testing.T) {
	qs := readFile(t, "../testdata/longmemeval-small.json")
	type q struct {
		id, typ, answer string
		sessions        int
		answerSessions  []string
		evidence        []string
		abstention      bool
	}
	want := []q{
		{"e47becba", "single-session-user", "Business Administration", 7, []string{"answer_280352e9"}, []string{"answer_280352e9_3"}, false},
		{"0a995998", "multi-session", "3", 7, []string{"answer_4be1b6b4_1", "answer_4be1b6b4_2"}, // a numeric answer
			[]string{"answer_4be1b6b4_1_1", "answer_4be1b6b4_2_1"}, false},
		{"gpt4_59c863d7", "temporal-reasoning", "7 days", 7, []string{"answer_e8a79c70_1", "answer_e8a79c70_2"},
			[]string{"answer_e8a79c70_1_1", "answer_e8a79c70_2_1"}, false},
		{"6a1eabeb", "knowledge-update", "23:12", 7, []string{"answer_a25d4a91_1", "answer_a25d4a91_2"},
			[]string{"answer_a25d4a91_1_1", "answer_a25d4a91_2_3"}, false},
		{"7161e7e2", "single-session-assistant", "Ebisu", 6, []string{"answer_sharegpt_5Lzox6N_0"},
			[]string{"answer_sharegpt_5Lzox6N_0_2"}, false}, // the assistant's turn
		{"8a2466db", "single-session-preference", "", 6, []string{"answer_0b4a2f1c"}, nil, false}, // no has_answer marks
		{"e47becba_abs", "single-session-user", "", 2, []string{"answer_280352e9_abs"}, nil, true},
	}
	if len(qs) != len(want) {
		t.Fatalf("Read = %d questions, want %d", len(qs), len(want))
	}
	for i, w := range want {
		g := qs[i]
		got := q{g.ID, g.Type, g.Answer, len(g.Sessions), g.AnswerSessions, g.EvidenceTurns(), g.Abstention()}
		if w.answer == "" {
			got.answer = ""
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("question %d\n got %+v\nwant %+v", i, got, w)
		}
	}
	first := qs[0]
	if got := first.Date; !got.Equal(time.Date(2023, 5, 30, 23, 40, 0, 0, time.UTC)) {
		t.Errorf("question date %v", got)
	}
	s := first.Sessions[3]
	if s.ID != "answer_280352e9" || !s.Date.Equal(time.Date(2023, 5, 10, 7, 12, 0, 0, time.UTC)) || len(s.Turns) != 4 {
		t.Errorf("session 3 = %s at %v with %d turns", s.ID, s.Date, len(s.Turns))
	}
	if tr := s.Turns[1]; tr != (longmemeval.Turn{ID: "answer_280352e9_2", Role: "assistant",
		Content: "List the degree, the school and the year, most recent first."}) {
		t.Errorf("turn 2 = %+v", tr)
	}
}

// TestReadOracle reads the oracle layout: only the evidence sessions, not
// in date order.
func TestReadOracle(t *testing.T) {
	qs := readFile(t, "../testdata/longmemeval-oracle-small.json")
	s := readFile(t, "../testdata/longmemeval-small.json")
	if len(qs) != len(s) {
		t.Fatalf("oracle has %d questions, the haystack file %d", len(qs), len(s))
	}
	for i, q := range qs {
		if len(q.Sessions) != len(q.AnswerSessions) {
			t.Errorf("%s: %d sessions for %d answer sessions", q.ID, len(q.Sessions), len(q.AnswerSessions))
		}
		if !reflect.DeepEqual(q.EvidenceTurns(), sortedLike(s[i].EvidenceTurns(), q)) {
			t.Errorf("%s: evidence %v, the haystack file's %v", q.ID, q.EvidenceTurns(), s[i].EvidenceTurns())
		}
	}
	// The multi-session question lists its later session first.
	ms := qs[1]
	if ms.Sessions[0].ID != "answer_4be1b6b4_2" || !ms.Sessions[0].Date.After(ms.Sessions[1].Date) {
		t.Errorf("oracle sessions %s (%v), %s (%v): want the later one first", ms.Sessions[0].ID, ms.Sessions[0].Date, ms.Sessions[1].ID, ms.Sessions[1].Date)
	}
}

// sortedLike orders ids as the sessions of q list them.
func sortedLike(ids []string, q longmemeval.Question) []string {
	var out []string
	for _, s := range q.Sessions {
		for _, id := range ids {
			if strings.HasPrefix(id, s.ID+"_") && !strings.Contains(strings.TrimPrefix(id, s.ID+"_"), "_") {
				out = append(out, id)
			}
		}
	}
	return out
}

func TestReadLayout(t *testing.T) {
	const data = `[{"question_id": "q1", "question_type": "multi-session", "question": "Where did I move?",
	  "answer": 42, "question_date": "2023/05/30 (Tue) 23:40",
	  "haystack_session_ids": ["s1", "s2", "s3"],
	  "haystack_dates": ["2023/05/20 (Sat) 02:21", "not a date", "2023/05/01"],
	  "haystack_sessions": [
	    [{"role": "user", "content": "I moved to Lisbon.", "has_answer": true}, {"role": "assistant", "content": "  "},
	     {"role": "assistant", "content": "Lovely city."}],
	    [],
	    [{"role": "user", "content": "hello"}]],
	  "answer_session_ids": ["s1", "s9", "s1", 3]}]`
	qs, err := longmemeval.Read(strings.NewReader(data))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	q := qs[0]
	if q.Answer != "42" || !reflect.DeepEqual(q.AnswerSessions, []string{"s1"}) {
		t.Errorf("answer %q answer sessions %v, want 42 and [s1] (s9 names no session, s1 repeats)", q.Answer, q.AnswerSessions)
	}
	// The blank turn is left out; the next keeps its position number.
	if got := []longmemeval.Turn(q.Sessions[0].Turns); len(got) != 2 || got[1].ID != "s1_3" || !got[0].HasAnswer {
		t.Errorf("session s1 turns %+v", got)
	}
	if !q.Sessions[1].Date.IsZero() || len(q.Sessions[1].Turns) != 0 {
		t.Errorf("session s2 %+v: want undated and empty", q.Sessions[1])
	}
	if want := time.Date(2023, 5, 1, 0, 0, 0, 0, time.UTC); !q.Sessions[2].Date.Equal(want) {
		t.Errorf("date without weekday and time: %v, want %v", q.Sessions[2].Date, want)
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		name, data string
		msg        string
	}{
		{"not JSON", "question_id: q1", "invalid character"},
		{"empty", "", "EOF"},
		{"object, not a list", `{"question_id":"q1"}`, "want a list of questions, found an object"},
		{"null", `null`, "want a list of questions, found null"},
		{"number", `7`, "want a list of questions, found 7"},
		{"question not an object", `[7]`, "question 0: json: cannot unmarshal number"},
		{"unclosed list", `[{"question_id":"q1","haystack_sessions":[]}`, "EOF"},
		{"truncated", `[{"question_id":"q1","haystack_sessions":[[`, "EOF"},
		{"data after the list", `[] []`, "data after the list"},
		{"no id", `[{"haystack_sessions":[]}]`, "question 0: no question_id"},
		{"blank id", `[{"question_id":" ","haystack_sessions":[]}]`, "no question_id"},
		{"no haystack", `[{"question_id":"q1"}]`, "question 0 (q1): no haystack_sessions"},
		{"ids and sessions differ", `[{"question_id":"q1","haystack_sessions":[[]],"haystack_session_ids":[]}]`,
			"0 haystack_session_ids for 1 haystack_sessions"},
		{"dates and sessions differ", `[{"question_id":"q1","haystack_sessions":[[]],"haystack_session_ids":["a"],"haystack_dates":["x","y"]}]`,
			"2 haystack_dates for 1 haystack_sessions"},
		{"session id twice", `[{"question_id":"q1","haystack_sessions":[[],[]],"haystack_session_ids":["a","a"]}]`, `session id "a" used twice`},
		{"question id twice", `[{"question_id":"q1","haystack_sessions":[]},{"question_id":"q1","haystack_sessions":[]}]`, `question 1: id "q1" used twice`},
		{"turn not an object", `[{"question_id":"q1","haystack_sessions":[["hi"]],"haystack_session_ids":["a"]}]`, "cannot unmarshal string"},
		{"content not a string", `[{"question_id":"q1","haystack_sessions":[[{"role":"user","content":7}]],"haystack_session_ids":["a"]}]`, "cannot unmarshal number"},
		{"has_answer not a bool", `[{"question_id":"q1","haystack_sessions":[[{"role":"user","content":"x","has_answer":"yes"}]],"haystack_session_ids":["a"]}]`, "cannot unmarshal string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qs, err := longmemeval.Read(strings.NewReader(tt.data))
			if err == nil {
				t.Fatalf("Read = %d questions, want an error", len(qs))
			}
			if qs != nil {
				t.Errorf("Read returned %d questions with its error", len(qs))
			}
			if !errors.Is(err, longmemeval.ErrFormat) {
				t.Errorf("Read error %v, want one matching ErrFormat", err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Read error %q, want it to mention %q", err, tt.msg)
			}
		})
	}
}

func TestParseDate(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2023/05/20 (Sat) 02:21", time.Date(2023, 5, 20, 2, 21, 0, 0, time.UTC)},
		{" 2023/05/20 (Sat) 02:21 ", time.Date(2023, 5, 20, 2, 21, 0, 0, time.UTC)},
		{"2023/05/20 02:21", time.Date(2023, 5, 20, 2, 21, 0, 0, time.UTC)},
		{"2023/05/20", time.Date(2023, 5, 20, 0, 0, 0, 0, time.UTC)},
		{"20 May 2023", time.Time{}},
		{"0000/01/10 (Sat) 00:00", time.Time{}}, // outside the years records may have
		{"2300/01/10 (Sat) 00:00", time.Time{}},
		{"", time.Time{}},
	}
	for _, tt := range tests {
		if got := longmemeval.ParseDate(tt.in); !got.Equal(tt.want) {
			t.Errorf("ParseDate(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
