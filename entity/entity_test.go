package entity_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/entity"
)

func keys(ms []entity.Mention) []string {
	var out []string
	for _, m := range ms {
		k := m.Key
		if m.Initial {
			k += "^"
		}
		out = append(out, k)
	}
	return out
}

func TestExtract(t *testing.T) {
	at := time.Date(2023, 5, 8, 13, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"name inside a sentence", "I went hiking with Melanie yesterday.", []string{"melanie", "date:2023-05-07"}},
		{"possessive and case", "We read Charlotte's Web with the KIDS.", []string{"charlotte web", "kids"}},
		{"sentence start is marked", "Caroline went to the park. Then I saw Caroline.", []string{"caroline", "then^"}},
		{"only at a sentence start", "Painting is great.", []string{"painting^"}},
		{"comma splits spans", "Thanks, Mel! Oh, Caroline, Bailey and Oscar.", []string{"mel", "caroline", "bailey", "oscar"}},
		{"stop words are no names", "Hey Melanie, I think I'm fine. Bye Caroline", []string{"melanie", "caroline"}},
		{"month with year", "We moved in May 2022 to Sweden", []string{"sweden", "date:2022-05"}},
		{"nothing", "just lower case words here", nil},
		{"no reference date leaves relatives out", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := keys(entity.Extract(tc.text, at))
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Extract(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
	if got := keys(entity.Extract("I saw Jon yesterday", time.Time{})); !reflect.DeepEqual(got, []string{"jon"}) {
		t.Fatalf("without a date: %q, want only the name", got)
	}
}

func TestResolveAliases(t *testing.T) {
	g := entity.New(nil)
	add := func(id uint64, sc, text string) { g.Add(id, sc, entity.Extract(text, time.Time{})) }
	add(1, "a", "I talked to Melanie today")
	add(2, "a", "Thanks, Mel!")
	add(3, "a", "I met Jon Smith at the gym")
	add(4, "a", "then Jon called")
	add(5, "a", "both Maria and Mariana came") // "mar" would be ambiguous
	add(6, "b", "hello Mel")                   // another scope: no Melanie there
	for _, tc := range []struct{ scope, key, want string }{
		{"a", "mel", "melanie"},
		{"a", "melanie", "melanie"},
		{"a", "jon", "jon smith"},
		{"a", "maria", "maria"}, // a full word stays itself even when it starts a longer name
		{"b", "mel", "mel"},
		{"a", "unknown", "unknown"},
	} {
		if got := g.Resolve(tc.scope, tc.key); got != tc.want {
			t.Errorf("Resolve(%q, %q) = %q, want %q", tc.scope, tc.key, got, tc.want)
		}
	}
	if got := g.Records("a", "mel"); !reflect.DeepEqual(got, []uint64{2, 1}) {
		t.Errorf("Records(mel) = %v, want both spellings [2 1]", got)
	}
	g.Remove(1)
	if got := g.Resolve("a", "mel"); got != "mel" {
		t.Errorf("after the only Melanie is removed, Resolve(mel) = %q, want mel", got)
	}
}

func TestRelated(t *testing.T) {
	g := entity.New(&entity.Options{MinHub: 3, MaxShare: 0.01})
	texts := []string{
		1: "We drove to Tampa with Gina",
		2: "the beach in Tampa was lovely",
		3: "Gina opened a store",
		4: "I adopted Bailey",
		5: "Gina and Bailey met",
		6: "Gina again",
		7: "Gina once more",
		8: "nothing named here",
	}
	for id, s := range texts {
		if s != "" {
			g.Add(uint64(id), "s", entity.Extract(s, time.Time{}))
		}
	}
	for _, tc := range []struct {
		name   string
		seeds  []uint64
		fanout int
		want   [][]uint64
	}{
		// Gina is in 5 of 7 records: a hub above MinHub 3, it links nothing.
		{"through a place, not the hub", []uint64{1}, 10, [][]uint64{{2}}},
		{"seeds are not linked to each other", []uint64{1, 2}, 10, [][]uint64{nil, nil}},
		{"fan-out bounds", []uint64{4}, 1, [][]uint64{{5}}},
		{"no entities", []uint64{8}, 10, [][]uint64{nil}},
		{"unknown seed", []uint64{99}, 10, [][]uint64{nil}},
		{"zero fan-out", []uint64{1}, 0, [][]uint64{nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := g.Related(tc.seeds, tc.fanout)
			ids := make([][]uint64, len(got))
			for i, ls := range got {
				for _, l := range ls {
					if l.Weight <= 0 || l.Weight > 1 {
						t.Errorf("weight %v outside (0, 1]", l.Weight)
					}
					ids[i] = append(ids[i], l.ID)
				}
			}
			if !reflect.DeepEqual(ids, tc.want) {
				t.Fatalf("Related(%v, %d) = %v, want %v", tc.seeds, tc.fanout, ids, tc.want)
			}
		})
	}
	if got := g.CoOccurring("s", "bailey", 5); !reflect.DeepEqual(got, []entity.Edge{{Key: "gina", Count: 1}}) {
		t.Errorf("CoOccurring(bailey) = %v", got)
	}
}

func TestRemoveForgetsKeys(t *testing.T) {
	g := entity.New(nil)
	g.Add(1, "s", entity.Extract("my friend Zebraquokka", time.Time{}))
	g.Add(2, "s", entity.Extract("my friend Melanie", time.Time{}))
	g.Remove(1)
	for _, k := range g.Keys("s") {
		if k == "zebraquokka" {
			t.Fatal("a removed record's entity is still a key")
		}
	}
	if g.Len() != 1 || len(g.Entities(1)) != 0 {
		t.Fatalf("after Remove: %d records, entities of 1: %v", g.Len(), g.Entities(1))
	}
	g.Remove(1) // twice is fine
}

func TestCodecRoundTrip(t *testing.T) {
	ms := entity.Extract("Thanks, Mel! Painting in Paris yesterday.", time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC))
	scope, got, err := entity.Decode(entity.Encode("conv-1", ms))
	if err != nil || scope != "conv-1" || !reflect.DeepEqual(got, ms) {
		t.Fatalf("round trip: %q %v %v, want conv-1 %v", scope, got, err, ms)
	}
	for _, bad := range [][]byte{nil, {9}, {1, 5, 'a'}, append(entity.Encode("x", ms), 0)} {
		if _, _, err := entity.Decode(bad); err == nil {
			t.Errorf("Decode(%v) accepted corrupt bytes", bad)
		}
	}
}

func FuzzExtract(f *testing.F) {
	for _, s := range []string{"I met Melanie's friend Jon Smith in May 2023.", "Thanks, Mel!", "", "ÉCOLE Zürich’s", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms := entity.Extract(s, time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC))
		seen := map[string]bool{}
		for _, m := range ms {
			if m.Key == "" || len(m.Key) > entity.MaxKeyBytes || seen[m.Key] {
				t.Fatalf("bad mention %+v of %q", m, s)
			}
			seen[m.Key] = true
		}
		_, got, err := entity.Decode(entity.Encode("s", ms))
		if err != nil || len(got) != len(ms) {
			t.Fatalf("mentions of %q do not round-trip: %v", s, err)
		}
	})
}

func FuzzDecode(f *testing.F) {
	f.Add(entity.Encode("s", []entity.Mention{{Key: "mel", Kind: entity.Name}}))
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		scope, ms, err := entity.Decode(b)
		if err != nil {
			return
		}
		if _, again, err := entity.Decode(entity.Encode(scope, ms)); err != nil || !reflect.DeepEqual(again, ms) {
			t.Fatalf("decoded mentions do not re-encode: %v", err)
		}
	})
}

func BenchmarkExtract(b *testing.B) {
	text := "Thanks, Mel! I went to the LGBTQ support group in Boston yesterday and met Jon Smith there; it was great."
	at := time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		entity.Extract(text, at)
	}
}

func TestSpecific(t *testing.T) {
	g := entity.New(&entity.Options{MinHub: 2, MaxShare: 0.01})
	for id, s := range map[uint64]string{
		1: "Thanks, Melanie!",
		2: "Wow, Melanie, that's great",
		3: "we saw Matt Patterson live, Melanie",
		4: "Painting is fun",
		5: "yesterday was fun",
	} {
		g.Add(id, "s", entity.Extract(s, time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC)))
	}
	// melanie is in 3 records, above MinHub 2: a hub. "Painting" is only
	// ever seen at a sentence start; dates do not count.
	if got := g.Specific([]uint64{1, 2, 3, 4, 5, 99}); !reflect.DeepEqual(got, []int{0, 0, 1, 0, 0, 0}) {
		t.Fatalf("Specific = %v, want only record 3 (Matt Patterson)", got)
	}
}

func TestSpecificEntities(t *testing.T) {
	g := entity.New(&entity.Options{MinHub: 2, MaxShare: 0.01})
	for id, s := range map[uint64]string{
		1: "Thanks, Melanie!",
		2: "Wow, Melanie, that's great",
		3: "we saw Matt Patterson live, Melanie",
		4: "Painting is fun",
		5: "I met Matt there, and then Lisa",
	} {
		g.Add(id, "s", entity.Extract(s, time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC)))
	}
	// The hub melanie and the sentence-initial "Painting" are left out;
	// "matt" is a short form of "matt patterson", which stands for both.
	want := [][][]string{nil, nil, {{"matt patterson", "matt"}}, nil, {{"matt patterson", "matt"}, {"lisa"}}, nil}
	if got := g.SpecificEntities([]uint64{1, 2, 3, 4, 5, 99}); !reflect.DeepEqual(got, want) {
		t.Fatalf("SpecificEntities = %q, want %q", got, want)
	}
}

// BenchmarkSpecificEntities: the answer prior's lookup of 200 candidates
// in a scope of 4,000 records, a LoCoMo conversation's size.
func BenchmarkSpecificEntities(b *testing.B) {
	g := entity.New(nil)
	at := time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC)
	names := []string{"Paris", "Rome", "Spain", "Matt Patterson", "Summer Sounds", "Luna", "Oliver", "Catan", "Chicago", "Toby"}
	for id := uint64(1); id <= 4000; id++ {
		text := fmt.Sprintf("Hey Melanie, last week I went to %s with my friend and we loved it.", names[id%uint64(len(names))])
		if id%3 == 0 {
			text = "Wow, that sounds great! Tell me more."
		}
		g.Add(id, "conv", entity.Extract(text, at))
	}
	ids := make([]uint64, 200)
	for i := range ids {
		ids[i] = uint64(i*19 + 1)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.SpecificEntities(ids)
	}
}
