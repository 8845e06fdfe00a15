package retrieve_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/retrieve"
)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func TestNameMatcher(t *testing.T) {
	m := retrieve.NewNameMatcher([]string{"Caroline", "Melanie Smith", "melanie smith", "", "Jon"})
	for _, tc := range []struct {
		q    string
		want []int
	}{
		{"What did Caroline research?", []int{0}},
		{"what did caroline research?", []int{0}},
		{"What is Melanie's favourite food?", []int{1}},
		{"Did Smith's kids go?", []int{1}},
		{"When did Mel paint a sunset?", []int{1}},
		{"when did mel paint a sunset?", nil}, // a lower-case short form is not a name
		{"Did Caroline and Melanie meet?", []int{0, 1}},
		{"What did Jonathan say?", nil}, // a longer word is not the short name
		{"What did the cat eat?", nil},
		{"Car trip with James'", nil},
	} {
		if got := m.Named(tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("Named(%q) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

func TestIsWhenQuestion(t *testing.T) {
	for q, want := range map[string]bool{
		"When did Caroline go to the support group?": true,
		"In what year did she move?":                 true,
		"What date is the wedding?":                  true,
		"How long ago was the trip?":                 true,
		"What did Melanie paint?":                    false,
		"How long is the run?":                       false,
	} {
		if got := retrieve.IsWhenQuestion(q); got != want {
			t.Errorf("IsWhenQuestion(%q) = %v", q, got)
		}
	}
}

func TestTimeMentions(t *testing.T) {
	ref := day(2023, time.May, 10) // a Wednesday
	for _, tc := range []struct {
		text       string
		want       string // the first mention's text
		start, end time.Time
	}{
		{"I went there yesterday", "yesterday", day(2023, 5, 9), day(2023, 5, 10)},
		{"we met last week!", "last week", day(2023, 5, 1), day(2023, 5, 8)},
		{"last month was busy", "last month", day(2023, 4, 1), day(2023, 5, 1)},
		{"two weeks ago I ran", "two weeks ago", day(2023, 4, 24), day(2023, 5, 1)},
		{"a few days ago", "a few days ago", day(2023, 5, 7), day(2023, 5, 8)},
		{"3 months ago", "3 months ago", day(2023, 2, 1), day(2023, 3, 1)},
		{"What happened in May 2023?", "may 2023", day(2023, 5, 1), day(2023, 6, 1)},
		{"back in March", "march", day(2023, 3, 1), day(2023, 4, 1)},
		{"on July 4th 2022", "july 4 2022", day(2022, 7, 4), day(2022, 7, 5)},
		{"last Friday", "last friday", day(2023, 5, 5), day(2023, 5, 6)},
		{"next year", "next year", day(2024, 1, 1), day(2025, 1, 1)},
		{"since 2019", "2019", day(2019, 1, 1), day(2020, 1, 1)},
	} {
		got := retrieve.TimeMentions(tc.text, ref)
		if len(got) == 0 {
			t.Errorf("%q: no mention", tc.text)
			continue
		}
		if g := got[0]; g.Text != tc.want || !g.Start.Equal(tc.start) || !g.End.Equal(tc.end) {
			t.Errorf("%q: %q [%s, %s), want %q [%s, %s)", tc.text, g.Text, g.Start.Format(time.DateOnly), g.End.Format(time.DateOnly), tc.want, tc.start.Format(time.DateOnly), tc.end.Format(time.DateOnly))
		}
	}
	for _, text := range []string{"You may go now", "I love to paint", "one of them", ""} {
		if got := retrieve.TimeMentions(text, ref); len(got) != 0 {
			t.Errorf("%q: mentions %v, want none", text, got)
		}
	}
	if got := retrieve.TimeMentions("see you tomorrow", time.Time{}); len(got) != 1 || got[0].Resolved() {
		t.Errorf("no reference date: %v, want one unresolved mention", got)
	}
}

func FuzzTimeMentions(f *testing.F) {
	for _, s := range []string{"last week", "two weeks ago", "May 7th 2023", "a couple of days ago", "next Friday", "9999 years ago", "Dec 31"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range retrieve.TimeMentions(s, day(2023, 5, 10)) {
			if m.Resolved() && !m.End.After(m.Start) {
				t.Fatalf("%q: empty span %v", s, m)
			}
		}
		retrieve.TimeMentions(s, time.Time{})
		retrieve.IsWhenQuestion(s)
	})
}

func FuzzNameMatcher(f *testing.F) {
	f.Add("Melanie Smith", "What did Mel's dog eat?")
	f.Add("", "'s")
	f.Fuzz(func(t *testing.T, speaker, q string) {
		m := retrieve.NewNameMatcher([]string{speaker, "Caroline"})
		for _, i := range m.Named(q) {
			_ = m.Speaker(i)
		}
	})
}

// priorDocs is a conversation of two speakers over two sessions.
var priorDocs = map[uint64]retrieve.Doc{
	1: {ID: 1, Scope: "c", Session: "s1", Speaker: "Caroline", Time: day(2023, 5, 8), Text: "I went to a support group yesterday"},
	2: {ID: 2, Scope: "c", Session: "s1", Speaker: "Melanie", Time: day(2023, 5, 8), Text: "That is great, I painted a lake"},
	3: {ID: 3, Scope: "c", Session: "s2", Speaker: "Caroline", Time: day(2023, 6, 20), Text: "The support group was lovely"},
	4: {ID: 4, Scope: "c", Session: "s2", Speaker: "Melanie", Time: day(2023, 6, 20), Text: "I went camping with the kids"},
}

func TestPriors(t *testing.T) {
	src := &fakeSource{
		// text scores: 4 best, then 3, 2, 1 (normalised 1, 2/3, 1/3, 0)
		text: []retrieve.Hit{{ID: 4, Score: 4}, {ID: 3, Score: 3}, {ID: 2, Score: 2}, {ID: 1, Score: 1}},
		docs: priorDocs,
	}
	now := day(2023, 7, 1)
	for _, tc := range []struct {
		stages string
		q      string
		want   []uint64
		time   float64
	}{
		{"none,text", "support group", []uint64{4, 3, 2, 1}, 0},
		// Caroline's turns gain 0.5: 3 = 2/3+1/2, 1 = 0+1/2, 4 = 1, 2 = 1/3
		{"none,text,speaker", "What did Caroline say about the support group?", []uint64{3, 4, 1, 2}, 0},
		{"none,text,speaker", "What did Caroline and Melanie do?", []uint64{4, 3, 2, 1}, 0}, // two people: no prior
		// a when question: only record 1 holds a time expression (1 -> 0.25)
		{"none,text,time", "When did she go to the support group?", []uint64{4, 3, 2, 1}, 0},
		{"none,text,time", "What happened in May 2023?", []uint64{4, 2, 3, 1}, 0.5},  // 1 and 2 are dated in May: 2 = 1/3 + 1/2
		{"none,text,time", "What happened last month?", []uint64{4, 3, 2, 1}, 0.5},   // June: 3 and 4
		{"none,text,time", "What happened in July 2023?", []uint64{4, 3, 2, 1}, 0.5}, // nothing dated then
		// session s2 holds the best turn: s2 turns + 0.25, s1 turns + 0.25*(1/3)
		{"none,text,session", "support group", []uint64{4, 3, 2, 1}, 0},
	} {
		st, err := retrieve.ParseStages(tc.stages)
		if err != nil {
			t.Fatal(err)
		}
		got, err := run(&retrieve.Options{Stages: st, Priors: retrieve.PriorOptions{Time: tc.time}}, &retrieve.Query{Text: tc.q, K: 4, Candidates: 4, Now: now}, src)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), tc.want) {
			t.Errorf("%s %q: %v, want %v", tc.stages, tc.q, ids(got), tc.want)
		}
	}
}

func TestTimePriorLiftsDatedTurn(t *testing.T) {
	src := &fakeSource{
		text: []retrieve.Hit{{ID: 3, Score: 2}, {ID: 1, Score: 1.9}, {ID: 2, Score: 0}},
		docs: priorDocs,
	}
	got, err := run(&retrieve.Options{Stages: retrieve.StageText | retrieve.StageTime}, &retrieve.Query{Text: "When did Caroline go to the support group?", K: 3, Candidates: 3}, src)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{1, 3, 2}; !slices.Equal(ids(got), want) {
		t.Errorf("order %v, want %v (the turn saying when first)", ids(got), want)
	}
}

func TestPriorScores(t *testing.T) {
	src := &fakeSource{
		text: []retrieve.Hit{{ID: 4, Score: 4}, {ID: 3, Score: 3}, {ID: 2, Score: 2}, {ID: 1, Score: 1}},
		docs: priorDocs,
	}
	for _, tc := range []struct {
		stages string
		q      string
		want   map[uint64]float64
	}{
		// June 2023, a month before Now: records 3 and 4 gain 0.25
		{"none,text,time", "What happened last month?", map[uint64]float64{4: 1.25, 3: 2.0/3 + 0.25, 2: 1.0 / 3, 1: 0}},
		{"none,text,time", "What happened in July 2023?", map[uint64]float64{4: 1, 3: 2.0 / 3, 2: 1.0 / 3, 1: 0}},
		// s2's best is 1, s1's best 1/3: a quarter of each
		{"none,text,session", "support group", map[uint64]float64{4: 1.25, 3: 2.0/3 + 0.25, 2: 1.0/3 + 0.25/3, 1: 0.25 / 3}},
	} {
		st, _ := retrieve.ParseStages(tc.stages)
		got, err := run(&retrieve.Options{Stages: st}, &retrieve.Query{Text: tc.q, K: 4, Candidates: 4, Now: day(2023, 7, 1)}, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range got {
			if d := c.Score - tc.want[c.ID]; d > 1e-9 || d < -1e-9 {
				t.Errorf("%s %q: record %d score %.4f, want %.4f", tc.stages, tc.q, c.ID, c.Score, tc.want[c.ID])
			}
		}
	}
}

// TestSpeakerPriorAmongManySpeakers checks the speaker prior when the
// candidates have more distinct speakers than the short list the prior
// scans before it switches to a map: the one person named still gains.
func TestSpeakerPriorAmongManySpeakers(t *testing.T) {
	names := []string{"Ava", "Ben", "Cleo", "Dov", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jude",
		"Kai", "Lena", "Milo", "Nora", "Otto", "Pia", "Quin", "Rosa", "Sven", "Tess"}
	src := &fakeSource{docs: map[uint64]retrieve.Doc{}}
	for i, n := range names {
		id := uint64(i + 1)
		src.docs[id] = retrieve.Doc{ID: id, Scope: "c", Session: "s1", Speaker: n, Text: "went to the market"}
		src.text = append(src.text, retrieve.Hit{ID: id, Score: float64(100 - i)})
	}
	for _, named := range []int{2, 18} { // before and after the switch
		q := &retrieve.Query{Text: fmt.Sprintf("What did %s buy at the market?", names[named]), K: len(names), Candidates: len(names)}
		got, err := run(&retrieve.Options{Stages: retrieve.StageText | retrieve.StageSpeaker}, q, src)
		if err != nil {
			t.Fatal(err)
		}
		// Text scores 100..81 normalise to (19-i)/19; the named
		// speaker's record gains half the best, nobody else anything.
		for _, c := range got {
			i := int(c.ID) - 1
			want := float64(19-i) / 19
			if i == named {
				want += 0.5
			}
			if d := c.Score - want; d > 1e-9 || d < -1e-9 {
				t.Errorf("%q: record %d (%s's) score %.4f, want %.4f", q.Text, c.ID, names[i], c.Score, want)
			}
		}
	}
}
