package retrieve_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/retrieve"
)

// reuseSource is a fakeSource of n turns in a few sessions, each turn
// answering the one before it, with the words and times the stages read
// (time mentions, speakers, sessions), its lists ranked by seed.
func reuseSource(seed, n int) *fakeSource {
	words := []string{"lake", "budget", "painting", "Friday", "May", "yesterday", "cat", "trip", "notes", "garden", "2023", "last", "week"}
	f := &fakeSource{docs: map[uint64]retrieve.Doc{}}
	t0 := time.Date(2023, 5, 1, 9, 0, 0, 0, time.UTC)
	for i := range n {
		id := uint64(i + 1)
		var text string
		for j := range 6 {
			text += words[(i*7+j*(seed+3))%len(words)] + " "
		}
		d := retrieve.Doc{ID: id, Scope: "s", Session: fmt.Sprint("sess", i%4), Speaker: []string{"user", "assistant"}[i%2],
			Time: t0.Add(time.Duration(i) * time.Hour), Text: text + "?"[:i%3/2]}
		if i > 0 {
			d.Prev, d.Context = id-1, id-1
		}
		f.docs[id] = d
		score := float64((i*(seed+5))%n) + 1
		f.text = append(f.text, retrieve.Hit{ID: id, Score: score, Coverage: float64(i%5) / 5})
		f.vec = append(f.vec, retrieve.Hit{ID: uint64(n - i), Score: float64(i%7) / 7})
	}
	slices.SortStableFunc(f.text, func(a, b retrieve.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return f
}

// TestPipelineResultsKeptAcrossQuestions: the stages reuse their maps
// and buffers from one question to the next; the candidates a caller
// keeps do not change when later questions run, one after another or
// at once, and each question, asked again, gets what it got.
func TestPipelineResultsKeptAcrossQuestions(t *testing.T) {
	p, err := retrieve.New(&retrieve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type ask struct {
		q   retrieve.Query
		src *fakeSource
	}
	var asks []ask
	for i, text := range []string{"what did we say about the lake budget last Friday", "the painting in May 2023", "cat notes yesterday", "garden trip last week"} {
		for _, n := range []int{12, 80, 300} {
			asks = append(asks, ask{retrieve.Query{Text: text, K: 10, Candidates: n, Now: time.Date(2023, 6, 1, 0, 0, 0, 0, time.UTC)}, reuseSource(i, n)})
		}
	}
	// The exported fields of a candidate, for comparing.
	type result struct {
		ID                                        uint64
		Text, Vector, Coverage, Fused, Score, Rel float64
	}
	results := func(c []retrieve.Candidate) []result {
		out := make([]result, len(c))
		for i, x := range c {
			out[i] = result{x.ID, x.Text, x.Vector, x.Coverage, x.Fused, x.Score, x.Relevance}
		}
		return out
	}
	kept := make([][]retrieve.Candidate, len(asks))
	want := make([][]result, len(asks))
	for i := range asks {
		got, err := p.Run(context.Background(), &asks[i].q, asks[i].src)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			t.Fatalf("question %d: no results", i)
		}
		kept[i], want[i] = got, results(got)
	}
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			for i := g; i < len(asks); i += 3 {
				if _, err := p.Run(context.Background(), &asks[i].q, asks[i].src); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for i := range asks {
		if got := results(kept[i]); !slices.Equal(got, want[i]) {
			t.Fatalf("question %d: the results kept changed under later questions:\n%v\nwere\n%v", i, got, want[i])
		}
		again, err := p.Run(context.Background(), &asks[i].q, asks[i].src)
		if err != nil {
			t.Fatal(err)
		}
		if got := results(again); !slices.Equal(got, want[i]) {
			t.Fatalf("question %d asked again:\n%v\nfirst\n%v", i, got, want[i])
		}
	}
}

// TestTimeMentionsKeptAcrossCalls: TimeMentions reuses its token lists;
// the spans a caller keeps do not change when later calls run, and each
// text, read again, gives what it gave.
func TestTimeMentionsKeptAcrossCalls(t *testing.T) {
	ref := time.Date(2023, 6, 1, 0, 0, 0, 0, time.UTC)
	texts := []string{"We went LAST WEEK, on Friday May 5th 2023", "yesterday and two months ago", "Nothing here", "NEXT FRIDAY in June", "in May, the 7th"}
	kept := make([][]retrieve.Span, len(texts))
	want := make([][]retrieve.Span, len(texts))
	for i, s := range texts {
		kept[i] = retrieve.TimeMentions(s, ref)
		want[i] = slices.Clone(kept[i])
	}
	for range 3 {
		for i, s := range texts {
			if got := retrieve.TimeMentions(s, ref); !slices.Equal(got, want[i]) {
				t.Fatalf("%q read again: %v, first %v", s, got, want[i])
			}
		}
	}
	for i := range texts {
		if !slices.Equal(kept[i], want[i]) {
			t.Fatalf("%q: the spans kept changed: %v, were %v", texts[i], kept[i], want[i])
		}
	}
}
