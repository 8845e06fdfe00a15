package locomo_test

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/locomo"
)

func readFixture(t *testing.T) []locomo.Conversation {
	t.Helper()
	f, err := os.Open("testdata/small.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	convs, err := locomo.Read(f)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return convs
}

func TestReadSessions(t *testing.T) {
	convs := readFixture(t)
	if len(convs) != 2 {
		t.Fatalf("Read = %d conversations, want 2", len(convs))
	}
	a, b := convs[0], convs[1]
	if a.ID != "conv-a" || a.Speakers != [2]string{"Ann", "Bob"} {
		t.Errorf("first conversation %q speakers %q, want conv-a [Ann Bob]", a.ID, a.Speakers)
	}
	if b.ID != "conv-b" || b.Speakers != [2]string{"Cleo", "Dan"} {
		t.Errorf("second conversation %q speakers %q, want conv-b [Cleo Dan]", b.ID, b.Speakers)
	}
	// The JSON object lists session_2 before session_1 and session_10
	// before session_3; sessions come back in number order.
	type sess struct {
		n     int
		time  time.Time
		turns []string
	}
	tests := []struct {
		conv locomo.Conversation
		want []sess
	}{
		{a, []sess{
			{1, time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC), []string{"D1:1", "D1:2", "D1:3", "D1:4"}},
			{2, time.Date(2023, 6, 20, 10, 0, 0, 0, time.UTC), []string{"D2:1", "D2:2", "D2:3"}},
			{3, time.Time{}, []string{"D3:1", "D3:2"}}, // "sometime in July"
			{10, time.Date(2023, 12, 1, 9, 15, 0, 0, time.UTC), []string{"D10:1", "D10:2"}},
		}},
		{b, []sess{
			{1, time.Time{}, []string{"D1:1", "D1:2", "D1:3"}}, // "the day before yesterday"
			{2, time.Date(2024, 3, 2, 16, 30, 0, 0, time.UTC), []string{"D2:1", "D2:2"}},
		}},
	}
	for _, tt := range tests {
		var got []sess
		for _, s := range tt.conv.Sessions {
			var ids []string
			for _, turn := range s.Turns {
				ids = append(ids, turn.ID)
			}
			got = append(got, sess{s.N, s.Time, ids})
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s sessions\n got %+v\nwant %+v", tt.conv.ID, got, tt.want)
		}
	}
}

func TestReadTurns(t *testing.T) {
	a := readFixture(t)[0]
	tests := []struct {
		session, turn int
		want          locomo.Turn
	}{
		{0, 0, locomo.Turn{ID: "D1:1", Speaker: "Ann", Text: "Hi Bob! I finally adopted an iguana, his name is Ziggy."}},
		{0, 3, locomo.Turn{ID: "D1:4", Speaker: "Bob",
			Text: "I'm training for a cycling race in the Alps. [shares a photo of a red road bike leaning on a fence]"}},
		{3, 1, locomo.Turn{ID: "D10:2", Speaker: "Bob", Text: "I signed up for the Alps race again next summer."}},
	}
	for _, tt := range tests {
		if got := a.Sessions[tt.session].Turns[tt.turn]; got != tt.want {
			t.Errorf("session %d turn %d\n got %+v\nwant %+v", tt.session, tt.turn, got, tt.want)
		}
	}
}

func TestReadQuestions(t *testing.T) {
	convs := readFixture(t)
	type q struct {
		answer   string
		category int
		evidence []string
	}
	want := map[string][]q{
		"conv-a": {
			{"Ziggy", locomo.SingleHop, []string{"D1:1"}},
			{"June 2023", locomo.Temporal, []string{"D2:2"}},
			{"3", locomo.MultiHop, []string{"D3:2"}},                                           // numeric answer
			{"He broke his wrist, then signed up again", 1, []string{"D1:4", "D2:2", "D10:2"}}, // "D1:4; D2:2"
			{"tea", locomo.OpenDomain, nil},                                                    // "D"
			{"Crete", locomo.SingleHop, nil},                                                   // "D:11:26"
			{"35 degrees", locomo.SingleHop, []string{"D1:3"}},                                 // D9:9 names no turn
			{"May 2023", locomo.Temporal, nil},                                                 // no evidence at all
			{"", locomo.Adversarial, []string{"D2:1"}},                                         // adversarial_answer only
			{"June 2023", locomo.Temporal, []string{"D2:1"}},                                   // duplicate evidence
		},
		"conv-b": {
			{"Vienna", locomo.SingleHop, []string{"D1:3"}},
			{"snails", locomo.SingleHop, []string{"D2:1"}},
			{"a bigger terrarium", locomo.SingleHop, nil}, // D10:1 is a turn of conv-a, not conv-b
			{"", locomo.Adversarial, nil},
		},
	}
	for _, c := range convs {
		var got []q
		for _, x := range c.QA {
			got = append(got, q{x.Answer, x.Category, x.Evidence})
		}
		if !reflect.DeepEqual(got, want[c.ID]) {
			t.Errorf("%s questions\n got %+v\nwant %+v", c.ID, got, want[c.ID])
		}
	}
	if got, want := convs[0].QA[0].Question, "What is the name of Ann's iguana?"; got != want {
		t.Errorf("first question %q, want %q", got, want)
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		name, data string
		msg        string
	}{
		{"not JSON", "conversation: hello", "invalid character"},
		{"empty", "", "EOF"},
		{"object, not a list", `{"sample_id":"x"}`, "cannot unmarshal object"},
		{"truncated", `[{"sample_id":"x","conversation":{`, "EOF"},
		{"data after the list", `[] []`, "data after the list"},
		{"session not a list", `[{"sample_id":"x","conversation":{"session_1":"hi"}}]`, "session_1"},
		{"turn text not a string", `[{"sample_id":"x","conversation":{"session_1":[{"dia_id":"D1:1","text":7}]}}]`, "session_1"},
		{"speaker not a string", `[{"sample_id":"x","conversation":{"speaker_a":1}}]`, "sample 0 (x)"},
		{"evidence not strings", `[{"sample_id":"x","qa":[{"question":"q","evidence":[1]}]}]`, "cannot unmarshal number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			convs, err := locomo.Read(strings.NewReader(tt.data))
			if err == nil {
				t.Fatalf("Read = %d conversations, want an error", len(convs))
			}
			if !errors.Is(err, locomo.ErrFormat) {
				t.Errorf("Read error %v, want one matching ErrFormat", err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Read error %q, want it to mention %q", err, tt.msg)
			}
		})
	}
}

func TestReadEdgeCases(t *testing.T) {
	tests := []struct {
		name, data string
		sessions   []int
	}{
		{"empty list", `[]`, nil},
		{"no conversation", `[{"sample_id":"x"}]`, []int{}},
		{"same number twice", `[{"conversation":{"session_01":[{"dia_id":"b"}],"session_1":[{"dia_id":"a"}]}}]`, []int{1, 1}},
		{"other keys ignored", `[{"conversation":{"session_2_summary":"s","session_x":[],"session_2":[]}}]`, []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			convs, err := locomo.Read(strings.NewReader(tt.data))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			var got []int
			for _, c := range convs {
				got = []int{}
				for _, s := range c.Sessions {
					got = append(got, s.N)
				}
			}
			if !reflect.DeepEqual(got, tt.sessions) {
				t.Errorf("session numbers %v, want %v", got, tt.sessions)
			}
		})
	}
}

// TestReadSameNumberOrder checks that sessions sharing a number come back
// in a stable order, whatever the map iteration order.
func TestReadSameNumberOrder(t *testing.T) {
	const data = `[{"conversation":{"session_1":[{"dia_id":"a"}],"session_01":[{"dia_id":"b"}],"session_001":[{"dia_id":"c"}]}}]`
	for range 20 {
		convs, err := locomo.Read(strings.NewReader(data))
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		var got []string
		for _, s := range convs[0].Sessions {
			got = append(got, s.Turns[0].ID)
		}
		if want := []string{"c", "b", "a"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("turns of sessions numbered 1: %v, want %v (sorted by key)", got, want)
		}
	}
}

func TestSessionOf(t *testing.T) {
	tests := []struct {
		id   string
		want int
	}{
		{"D3:7", 3}, {"D10:1", 10}, {"D", 0}, {"D:11:26", 0}, {"D3", 0}, {"", 0}, {"X3:1", 0},
	}
	for _, tt := range tests {
		if got := locomo.SessionOf(tt.id); got != tt.want {
			t.Errorf("SessionOf(%q) = %d, want %d", tt.id, got, tt.want)
		}
	}
}

func TestCategoryName(t *testing.T) {
	tests := []struct {
		c    int
		want string
	}{
		{locomo.MultiHop, "multi-hop"}, {locomo.Temporal, "temporal"}, {locomo.OpenDomain, "open-domain"},
		{locomo.SingleHop, "single-hop"}, {locomo.Adversarial, "adversarial"}, {9, "category-9"},
	}
	for _, tt := range tests {
		if got := locomo.CategoryName(tt.c); got != tt.want {
			t.Errorf("CategoryName(%d) = %q, want %q", tt.c, got, tt.want)
		}
	}
}

// TestReadDateRange checks that a session date the engine would refuse
// (years outside 1700-2200) reads as undated, so the conversation still
// imports.
func TestReadDateRange(t *testing.T) {
	tests := []struct {
		date string
		want time.Time
	}{
		{"1:56 pm on 8 May, 2023", time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)},
		{"1:56 pm on 8 May, 0023", time.Time{}},
		{"1:56 pm on 8 May, 1699", time.Time{}},
		{"1:56 pm on 8 May, 2300", time.Time{}},
	}
	for _, tt := range tests {
		data := `[{"conversation":{"session_1_date_time":"` + tt.date + `","session_1":[{"dia_id":"D1:1","text":"hi"}]}}]`
		convs, err := locomo.Read(strings.NewReader(data))
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if got := convs[0].Sessions[0].Time; !got.Equal(tt.want) {
			t.Errorf("date %q read as %v, want %v", tt.date, got, tt.want)
		}
	}
}
