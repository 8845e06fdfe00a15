package retrieve_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/retrieve"
)

// TestReplyStage: an agent's reply that restates the user's turn it
// answers (and matched the query mostly through that turn, indexed as
// its context) ranks right below that turn; every other reply keeps its
// place.
func TestReplyStage(t *testing.T) {
	user := func(id uint64, text string) retrieve.Doc {
		return retrieve.Doc{ID: id, Prev: id - 1, Context: id - 1, Session: "s", Speaker: "user", Text: text}
	}
	agent := func(id uint64, text string) retrieve.Doc {
		d := user(id, text)
		d.Speaker = "assistant"
		return d
	}
	const cat = "what is the name of the cat"
	tests := []struct {
		name  string
		query string
		docs  []retrieve.Doc
		want  []uint64 // the reply (6) scores 3, its turn (5) 2, record 7 1
	}{
		{"echo below the user's statement", cat, []retrieve.Doc{
			user(5, "My cat Pixel hates the new flat."),
			agent(6, "Cats often need a couple of weeks. Give Pixel a quiet corner."),
			user(7, "Unrelated words."),
		}, []uint64{5, 6, 7}},
		{"the agent adds a query term of its own", "cat name", []retrieve.Doc{
			user(5, "My cat hates the new flat."),
			agent(6, "Cats need a name they know: call Pixel by name."),
			user(7, "Unrelated words."),
		}, []uint64{6, 5, 7}},
		{"the reply repeats nothing of the turn", "food allergy", []retrieve.Doc{
			user(5, "I'm allergic to shellfish."),
			agent(6, "Try the local food market on Saturday."),
			user(7, "Unrelated words."),
		}, []uint64{6, 5, 7}},
		{"echo with a query term the turn lacks (variant stems count)", "food allergy", []retrieve.Doc{
			user(5, "Also I'm allergic to shellfish, in a city full of seafood."),
			agent(6, "Noted: no shellfish. Sardines are fish, if you want local food."),
			user(7, "Unrelated words."),
		}, []uint64{5, 6, 7}},
		{"the turn is a question", "database decision", []retrieve.Doc{
			user(5, "Which database did we decide on?"),
			agent(6, "We decided on the Postgres database."),
			user(7, "Unrelated words."),
		}, []uint64{6, 5, 7}},
		{"two people, no agent", cat, []retrieve.Doc{
			{ID: 5, Prev: 4, Context: 4, Session: "s", Speaker: "Ana", Text: "My cat Pixel hates the new flat."},
			{ID: 6, Prev: 5, Context: 5, Session: "s", Speaker: "Ben", Text: "Cats often need a couple of weeks."},
			user(7, "Unrelated words."),
		}, []uint64{6, 5, 7}},
		{"indexed without context", cat, []retrieve.Doc{
			user(5, "My cat Pixel hates the new flat."),
			{ID: 6, Prev: 5, Session: "s", Speaker: "assistant", Text: "Cats often need a couple of weeks. Give Pixel a quiet corner."},
			user(7, "Unrelated words."),
		}, []uint64{6, 5, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{docs: map[uint64]retrieve.Doc{}}
			// The reply scores highest, its turn next, the unrelated
			// record last.
			scores := map[uint64]float64{6: 3, 5: 2, 7: 1}
			for _, d := range tt.docs {
				src.docs[d.ID] = d
			}
			for _, id := range []uint64{6, 5, 7} {
				src.text = append(src.text, retrieve.Hit{ID: id, Score: scores[id]})
			}
			o := &retrieve.Options{Stages: retrieve.StageText | retrieve.StageReply}
			q := &retrieve.Query{Text: tt.query, K: 3, Candidates: 3}
			got, err := run(o, q, src)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tt.want) {
				t.Errorf("ranking %v, want %v", ids(got), tt.want)
			}
			o.Stages = retrieve.StageText
			if got, _ := run(o, q, src); !slices.Equal(ids(got), []uint64{6, 5, 7}) {
				t.Fatalf("precondition: without the stage %v", ids(got))
			}
		})
	}
}

// The reply stage's "the reply repeats a word of the turn" reads the
// analysed documents' content keys: it answers as the texts do, for
// plurals, function words, the speakers' names, long and non-ASCII
// words.
func TestDocRepeatsAsTexts(t *testing.T) {
	vocab := []string{"cat", "cats", "Cats", "glass", "glasses", "the", "and", "I", "a", "Pixel", "pixels",
		"shellfish", "wonderfully", "Caroline", "caroline", "melanie", "café", "Café", "München", "2023", "x", "ok", "noted"}
	names := [][]string{nil, {"caroline"}, {"pixel"}, {"melanie", "caroline"}, {"wonderfully"}}
	r := rand.New(rand.NewPCG(5, 6))
	text := func() string {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			b.WriteString(vocab[r.IntN(len(vocab))])
			b.WriteString([]string{" ", ", ", ". ", "! "}[r.IntN(4)])
		}
		return b.String()
	}
	cases := []struct {
		reply, turn string
		names       []string
		want        bool
	}{
		{"Noted: no shellfish.", "I'm allergic to shellfish.", nil, true},
		{"Give Pixel a quiet corner.", "My cat Pixel is shy.", []string{"pixel"}, false},
		{"Give Pixel a quiet corner.", "My cat Pixel is shy.", nil, true},
		{"Cats are great.", "I have a cat.", nil, true},
		{"The and a.", "The and a.", nil, false},
	}
	for range 3000 {
		cases = append(cases, struct {
			reply, turn string
			names       []string
			want        bool
		}{text(), text(), names[r.IntN(len(names))], false})
	}
	for i, c := range cases {
		want := retrieve.Repeats(c.reply, c.turn, c.names)
		if i < 5 && want != c.want {
			t.Fatalf("repeats(%q, %q, %q) = %v, want %v", c.reply, c.turn, c.names, want, c.want)
		}
		d, p := &retrieve.Doc{Text: c.reply}, &retrieve.Doc{Text: c.turn}
		d.Analyse()
		p.Analyse()
		if got := retrieve.DocRepeats(d, p, c.names); got != want {
			t.Fatalf("analysed: repeats(%q, %q, %q) = %v, texts say %v", c.reply, c.turn, c.names, got, want)
		}
	}
}
