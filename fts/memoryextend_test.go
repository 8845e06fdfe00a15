package fts_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
)

// A search for a question followed by more words (the prf stage's
// feedback search: the question, a space, the words of its best
// records) right after the search for the question returns what it
// returns alone: the same documents, scores and coverage to the bit.
// The questions mix words of the documents with words of none, stop
// words, possessives, punctuation and capitals; the words after repeat
// some of the question's; both sides hold documents of several scopes,
// searched with and without a filter, for k above and below the number
// of documents matched, with and without a floor, and with the index
// changed between the two searches.
func TestMemoryExtendedQuestion(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vocab := []string{"garden", "gardens", "Garden's", "roses", "painted", "painting", "sunrise", "lake", "U.S.", "3.5",
		"Caroline", "caroline's", "adoption", "agency", "the", "a", "of", "and", "is", "support", "group", "bridge",
		"red", "tuesday", "trip", "2023", "o'clock", "x_y", "café", "naïve", "rare"}
	for i := range 40 {
		vocab = append(vocab, fmt.Sprintf("w%d", i))
	}
	words := func(n int, ascii bool) string {
		var b []string
		for len(b) < n {
			w := vocab[r.IntN(len(vocab))]
			if ascii && (w == "café" || w == "naïve") {
				continue
			}
			if r.IntN(6) == 0 {
				w += []string{",", ".", "?", "!"}[r.IntN(4)]
			}
			b = append(b, w)
		}
		return strings.Join(b, " ")
	}
	ctx := context.Background()
	for _, n := range []int{5, 40, 99, 150, 400} {
		docs := make([]engine.TextDoc, n)
		for i := range docs {
			docs[i] = engine.TextDoc{ID: uint64(i + 1), Text: words(3+r.IntN(12), r.IntN(8) != 0), Scope: []string{"a", "b"}[i%2]}
			if r.IntN(3) == 0 {
				docs[i].Context = words(3+r.IntN(10), true)
			}
		}
		m, err := fts.NewMemory("")
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Apply(docs, nil, 0); err != nil {
			t.Fatal(err)
		}
		// A search for a word of no document stands between the
		// comparisons: the question searched before one counts for
		// nothing.
		reset := func() {
			if _, err := m.Search(ctx, "zzzunrelated", 10, engine.TextFilter{}); err != nil {
				t.Fatal(err)
			}
		}
		search := func(q string, k int, f engine.TextFilter) []engine.TextHit {
			hits, err := m.Search(ctx, q, k, f)
			if err != nil {
				t.Fatal(err)
			}
			return hits
		}
		for i := range 150 {
			q := words(1+r.IntN(8), r.IntN(10) != 0)
			ext := q + " " + words(1+r.IntN(10), r.IntN(10) != 0)
			if i%7 == 0 {
				ext = q + " " + strings.Fields(q)[0] // only words it holds
			}
			k := []int{1, 10, 100, 1000}[r.IntN(4)]
			f := engine.TextFilter{}
			if r.IntN(3) == 0 {
				f.Scope = "b"
			}
			ef := f
			if r.IntN(3) == 0 {
				if all := search(q, k, f); len(all) > 0 {
					ef.Floor = all[len(all)-1].Score * (1 - 1e-9)
				}
			}
			reset()
			search(q, k, f)
			if i%5 == 0 {
				// The index changes between the two searches.
				d := docs[r.IntN(len(docs))]
				d.Text = words(4, true)
				if err := m.Apply([]engine.TextDoc{d}, []uint64{uint64(1 + r.IntN(n))}, 0); err != nil {
					t.Fatal(err)
				}
			}
			got := search(ext, k, ef)
			reset()
			if want := search(ext, k, ef); !sameHits(got, want) {
				t.Fatalf("n=%d k=%d %+v: %q then %q:\n got %v\nwant %v", n, k, ef, q, ext, got, want)
			}
			reset()
		}
	}
}

// sameHits reports that a and b hold the same hits in the same order,
// their scores and coverage equal to the bit.
func sameHits(a, b []engine.TextHit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || math.Float64bits(a[i].Score) != math.Float64bits(b[i].Score) || math.Float64bits(a[i].Coverage) != math.Float64bits(b[i].Coverage) {
			return false
		}
	}
	return true
}
