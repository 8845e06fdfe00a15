package retrieve_test

import (
	"cmp"
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/retrieve"
)

func TestDecompose(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"What do Jon and Gina both have in common?", []string{"What do Jon have in common?", "What do Gina have in common?"}},
		{"Who is older, Jon or Gina?", []string{"Who is older, Jon", "Who is older, Gina?"}},
		{"Did Jon, Gina and Maria visit Paris?", []string{"Did Jon visit Paris?", "Did Gina visit Paris?", "Did Maria visit Paris?"}},
		{"What subject have Caroline and Melanie's kids painted?", []string{"What subject have Caroline kids painted?", "What subject have Melanie's kids painted?"}},
		{"When did she paint and where did she go?", []string{"When did she paint", "where did she go?"}},
		{"What did Melanie paint?", []string{"What did Melanie paint?"}},
		{"salt and pepper", []string{"salt and pepper"}},
		{"", []string{""}},
	} {
		if got := retrieve.Decompose(tc.q, 3); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Decompose(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
	if got := retrieve.Decompose("Did A1 and Bo, Cy, Di and Ed go?", 2); len(got) != 2 {
		t.Errorf("cap of 2 parts: got %q", got)
	}
}

func FuzzDecompose(f *testing.F) {
	for _, s := range []string{"What do Jon and Gina both like?", "Jon, Gina, and Maria", "When and what and Who", "and and And"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, q string, n int) {
		parts := retrieve.Decompose(q, n)
		if len(parts) == 0 || len(parts) > max(n, 1) {
			t.Fatalf("Decompose(%q, %d) gave %d parts", q, n, len(parts))
		}
		if len(parts) == 1 && parts[0] != q {
			t.Fatalf("a single part must be the question itself: %q", parts[0])
		}
	})
}

// linkSource is a fakeSource whose records are linked by a fixed graph.
type linkSource struct {
	fakeSource
	links map[uint64][]retrieve.Hit
}

func (l *linkSource) Linked(seeds []uint64, fanout int) ([][]retrieve.Hit, error) {
	out := make([][]retrieve.Hit, len(seeds))
	for i, s := range seeds {
		out[i] = l.links[s][:min(fanout, len(l.links[s]))]
	}
	return out, nil
}

func TestEntityExpansion(t *testing.T) {
	src := &linkSource{
		fakeSource: fakeSource{text: []retrieve.Hit{{ID: 1, Score: 10}, {ID: 2, Score: 5}, {ID: 3, Score: 4}, {ID: 4, Score: 1}}},
		links: map[uint64][]retrieve.Hit{
			1: {{ID: 9, Score: 1}, {ID: 4, Score: 0.5}}, // 9 is no candidate yet
		},
	}
	only := retrieve.StageText
	q := &retrieve.Query{Text: "q", K: 10, Candidates: 10}
	base, err := run(&retrieve.Options{Stages: only}, q, src)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(base); !reflect.DeepEqual(got, []uint64{1, 2, 3, 4}) {
		t.Fatalf("without expansion: %v", got)
	}
	for _, tc := range []struct {
		name string
		o    retrieve.ExpandOptions
		want []uint64
	}{
		// linear fusion: 1 -> 1, 2 -> 4/9, 3 -> 3/9, 4 -> 0; a share of 0.5
		// gives 9 0.5 and 4 0.25.
		{"links rise by a share of the seed", retrieve.ExpandOptions{Seeds: 1, Fanout: 10, Share: 0.5}, []uint64{1, 9, 2, 3, 4}},
		{"fan-out 1 reaches only the heaviest link", retrieve.ExpandOptions{Seeds: 1, Fanout: 1, Share: 0.5}, []uint64{1, 9, 2, 3, 4}},
		{"small share stays below the text's candidates", retrieve.ExpandOptions{Seeds: 1, Fanout: 10, Share: 0.1}, []uint64{1, 2, 3, 9, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := run(&retrieve.Options{Stages: only | retrieve.StageEntity, Expand: tc.o}, q, src)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ids(got), tc.want) {
				t.Fatalf("order %v, want %v", ids(got), tc.want)
			}
		})
	}
	// A source without a graph leaves the list as it was.
	got, err := run(&retrieve.Options{Stages: only | retrieve.StageEntity}, q, &src.fakeSource)
	if err != nil || !reflect.DeepEqual(ids(got), ids(base)) {
		t.Fatalf("without a Linker: %v %v", ids(got), err)
	}
}

func TestDecomposeStageMerges(t *testing.T) {
	// The text generator answers by the question's words: "jon" finds 1,
	// "gina" finds 2, the whole question finds 3 first.
	src := &wordSource{hits: map[string][]retrieve.Hit{
		"jon":  {{ID: 1, Score: 9}, {ID: 4, Score: 1}},
		"gina": {{ID: 2, Score: 3}, {ID: 5, Score: 1}},
	}, whole: []retrieve.Hit{{ID: 3, Score: 20}, {ID: 1, Score: 2}, {ID: 6, Score: 1}}}
	q := &retrieve.Query{Text: "What do Jon and Gina both like?", K: 3, Candidates: 10}
	got, err := run(&retrieve.Options{Stages: retrieve.StageText | retrieve.StageDecompose}, q, src)
	if err != nil {
		t.Fatal(err)
	}
	top := ids(got)[:3]
	if !reflect.DeepEqual(top, []uint64{3, 2, 1}) {
		t.Fatalf("top 3 %v, want each list's best (3, then 2 and 1 by id)", top)
	}
	if len(src.asked) != 3 {
		t.Fatalf("asked %q, want the whole question and two parts", src.asked)
	}
}

// TestDecomposeAsksVectorOnce: the parts of a decomposed question share
// the whole question's vector, so the vector candidates are asked for
// once, and every part's run ranks them as the first run did.
func TestDecomposeAsksVectorOnce(t *testing.T) {
	q := &retrieve.Query{Text: "What do Jon and Gina both like?", Vector: []float32{1, 0}, K: 3, Candidates: 10}
	newSource := func() *vectorCounter {
		return &vectorCounter{wordSource: wordSource{hits: map[string][]retrieve.Hit{
			"jon":  {{ID: 1, Score: 9}, {ID: 4, Score: 1}},
			"gina": {{ID: 2, Score: 3}, {ID: 5, Score: 1}},
		}, whole: []retrieve.Hit{{ID: 3, Score: 20}, {ID: 1, Score: 2}, {ID: 6, Score: 1}},
			fakeSource: fakeSource{vec: []retrieve.Hit{{ID: 7, Score: 0.9}, {ID: 2, Score: 0.5}, {ID: 8, Score: 0.1}}}}}
	}
	stages := retrieve.StageText | retrieve.StageVector | retrieve.StageDecompose
	src := newSource()
	got, err := run(&retrieve.Options{Stages: stages}, q, src)
	if err != nil {
		t.Fatal(err)
	}
	if src.vectors != 1 || len(src.asked) != 3 {
		t.Fatalf("vector asked %d times, text %d times; want 1 and 3", src.vectors, len(src.asked))
	}
	// Each run alone, merged as the stage merges: the same list.
	var want []uint64
	seen := map[uint64]bool{}
	type scored struct {
		id uint64
		s  float64
	}
	var all []scored
	best := map[uint64]float64{}
	p, err := retrieve.New(&retrieve.Options{Stages: stages})
	if err != nil {
		t.Fatal(err)
	}
	parts := p.Parts(q.Text)
	if len(parts) != 2 {
		t.Fatalf("parts %q, want 2", parts)
	}
	for _, text := range append([]string{q.Text}, parts...) {
		pq := *q
		pq.Text = text
		c, err := run(&retrieve.Options{Stages: retrieve.StageText | retrieve.StageVector}, &pq, newSource())
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range c {
			s := x.Score / c[0].Score
			if !seen[x.ID] {
				seen[x.ID] = true
				all = append(all, scored{x.ID, s})
			}
			best[x.ID] = max(best[x.ID], s)
		}
	}
	slices.SortFunc(all, func(a, b scored) int {
		if best[a.id] != best[b.id] {
			return cmp.Compare(best[b.id], best[a.id])
		}
		return cmp.Compare(b.id, a.id)
	})
	for _, x := range all {
		want = append(want, x.id)
	}
	if !reflect.DeepEqual(ids(got), want) {
		t.Errorf("decomposed %v, want the runs merged %v", ids(got), want)
	}
}

type vectorCounter struct {
	wordSource
	vectors int
}

func (v *vectorCounter) Vector(ctx context.Context, q *retrieve.Query, c int) ([]retrieve.Hit, error) {
	v.vectors++
	return v.wordSource.Vector(ctx, q, c)
}

type wordSource struct {
	fakeSource
	hits  map[string][]retrieve.Hit
	whole []retrieve.Hit
	asked []string
}

func (w *wordSource) Text(_ context.Context, q *retrieve.Query, c int) ([]retrieve.Hit, error) {
	w.asked = append(w.asked, q.Text)
	lower := strings.ToLower(q.Text)
	hasJon, hasGina := strings.Contains(lower, "jon"), strings.Contains(lower, "gina")
	switch {
	case hasJon && hasGina:
		return w.whole, nil
	case hasJon:
		return w.hits["jon"], nil
	case hasGina:
		return w.hits["gina"], nil
	}
	return nil, nil
}

func TestTemporalRelevance(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2023, 5, d, 0, 0, 0, 0, time.UTC) }
	span := func(a, b int) retrieve.Span { return retrieve.Span{Start: day(a), End: day(b)} }
	for _, tc := range []struct {
		name string
		m, k retrieve.Span
		want float64
	}{
		{"same interval", span(1, 2), span(1, 2), 1},
		{"inside, centred", span(3, 4), span(1, 6), 0.5*(1.0/5) + 0.5*1},
		{"apart", span(1, 2), span(9, 10), 0.5 * (1 - 8.0/9)},
		{"unresolved", retrieve.Span{}, span(1, 2), 0},
	} {
		if got := retrieve.TemporalRelevance(tc.m, tc.k, 0.5); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: T = %v, want %v", tc.name, got, tc.want)
		}
	}
	now := day(10)
	if got := retrieve.Robustness(now.AddDate(-1, 0, 0), now, 0, 365*24*time.Hour, 0.5); math.Abs(got-math.Exp(-1)) > 1e-9 {
		t.Errorf("R a year old, unseen = %v, want 1/e", got)
	}
	if a, b := retrieve.Robustness(day(1), now, 0, 24*time.Hour, 0.5), retrieve.Robustness(day(1), now, 10, 24*time.Hour, 0.5); !(b > a) {
		t.Errorf("a memory seen more often decays slower: %v vs %v", a, b)
	}
	if got := retrieve.Robustness(now, day(1), 0, 24*time.Hour, 0.5); got != 1 {
		t.Errorf("a future memory: R = %v, want 1", got)
	}
}

func TestTemporalStage(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2023, 5, d, 12, 0, 0, 0, time.UTC) }
	src := &fakeSource{
		text: []retrieve.Hit{{ID: 1, Score: 2}, {ID: 2, Score: 1.9}, {ID: 3, Score: 0.1}},
		docs: map[uint64]retrieve.Doc{
			1: {ID: 1, Time: day(1), Text: "a"},
			2: {ID: 2, Time: day(20), Text: "b"},
			3: {ID: 3, Time: day(2), Text: "c"},
		},
	}
	q := &retrieve.Query{Text: "what did we do yesterday", K: 3, Candidates: 10, Now: day(21)}
	got, err := run(&retrieve.Options{Stages: retrieve.StageText | retrieve.StageTemporal}, q, src)
	if err != nil {
		t.Fatal(err)
	}
	if ids(got)[0] != 2 {
		t.Fatalf("order %v: the record of yesterday should lead", ids(got))
	}
	got, err = run(&retrieve.Options{Stages: retrieve.StageText | retrieve.StageRobust, HMem: retrieve.HMemOptions{Tau: 7 * 24 * time.Hour}}, q, src)
	if err != nil {
		t.Fatal(err)
	}
	if ids(got)[0] != 2 {
		t.Fatalf("order %v: robustness should favour the recent record", ids(got))
	}
}

// specSource names specific entities in some records.
type specSource struct {
	fakeSource
	specific map[uint64]int
}

func (s *specSource) Specific(ids []uint64) ([]int, error) {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = s.specific[id]
	}
	return out, nil
}

func TestEntityPrior(t *testing.T) {
	src := &specSource{
		fakeSource: fakeSource{text: []retrieve.Hit{{ID: 1, Score: 10}, {ID: 2, Score: 9.5}, {ID: 3, Score: 0}}},
		specific:   map[uint64]int{2: 1},
	}
	q := &retrieve.Query{Text: "q", K: 3, Candidates: 10}
	for _, tc := range []struct {
		name   string
		stages retrieve.Stages
		want   []uint64
	}{
		{"off", retrieve.StageText, []uint64{1, 2, 3}},
		{"a record naming a specific entity rises", retrieve.StageText | retrieve.StageEntityPrior, []uint64{2, 1, 3}},
	} {
		got, err := run(&retrieve.Options{Stages: tc.stages}, q, src)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ids(got), tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, ids(got), tc.want)
		}
	}
}

// TestPipelineParts checks that Parts names the parts a question runs
// as only when the decomposition stage is on and splits it.
func TestPipelineParts(t *testing.T) {
	for _, tc := range []struct {
		stages retrieve.Stages
		q      string
		want   int
	}{
		{retrieve.DefaultStages, "What do Jon and Gina both have in common?", 2},
		{retrieve.DefaultStages, "What does Jon like?", 0},
		{retrieve.DefaultStages &^ retrieve.StageDecompose, "What do Jon and Gina both have in common?", 0},
	} {
		p, err := retrieve.New(&retrieve.Options{Stages: tc.stages})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Parts(tc.q); len(got) != tc.want || (tc.want == 0 && got != nil) {
			t.Errorf("Parts(%q) with stages %v = %q, want %d parts", tc.q, tc.stages, got, tc.want)
		}
	}
}

// TestPipelinePartsAskedAgain: one pipeline asked the parts of questions
// in turn, each several times in a row and again later, gives each time
// what Decompose gives the question (Parts keeps the last question's).
func TestPipelinePartsAskedAgain(t *testing.T) {
	p, err := retrieve.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	qs := []string{
		"What do Jon and Gina both have in common?",
		"What does Jon like?",
		"Who is older, Jon or Gina?",
		"When did she paint and where did she go?",
		"What do Jon and Gina both have in common? ",
		"",
	}
	for i := range 3 * len(qs) {
		q := qs[(i*5)%len(qs)]
		for range 1 + i%3 {
			want := retrieve.Decompose(q, retrieve.DefaultMaxParts)
			if len(want) < 2 {
				want = nil
			}
			if got := p.Parts(q); !slices.Equal(got, want) || (want == nil) != (got == nil) {
				t.Fatalf("Parts(%q) = %q, want %q", q, got, want)
			}
		}
	}
}
