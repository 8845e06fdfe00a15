package retrieve_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/retrieve"
)

// prfSource answers the first lexical search with fixed hits and a
// search that holds an expansion word with the records holding it.
type prfSource struct {
	fakeSource
	queries []string
	asked   []retrieve.Query // every search's query
}

func (p *prfSource) Text(ctx context.Context, q *retrieve.Query, c int) ([]retrieve.Hit, error) {
	p.queries = append(p.queries, q.Text)
	p.asked = append(p.asked, *q)
	if strings.Contains(q.Text, "shellfish") {
		return []retrieve.Hit{{ID: 2, Score: 5}, {ID: 3, Score: 4}}, nil
	}
	return p.fakeSource.Text(ctx, q, c)
}

func TestPRF(t *testing.T) {
	src := &prfSource{fakeSource: fakeSource{
		text: []retrieve.Hit{{ID: 2, Score: 3}, {ID: 1, Score: 1}},
		docs: map[uint64]retrieve.Doc{
			1: {ID: 1, Text: "the Portuguese tutor"},
			2: {ID: 2, Text: "no shellfish, shellfish is awkward, try local food"},
			3: {ID: 3, Text: "I'm allergic to shellfish"},
		},
	}}
	got, err := run(&retrieve.Options{Stages: retrieve.StageText | retrieve.StagePRF, PRF: retrieve.PRFOptions{Docs: 1, Terms: 2}},
		&retrieve.Query{Text: "food allergy", K: 3, Candidates: 3}, src)
	if err != nil {
		t.Fatal(err)
	}
	// The second search holds the best record's two weightiest new words.
	if len(src.queries) != 2 || src.queries[1] != "food allergy shellfish awkward" {
		t.Fatalf("searches %q, want the question then its expansion", src.queries)
	}
	// 2: 0.5*3/3 + 0.5*5/5 = 1; 3: 0.5*4/5 = 0.4; 1: 0.5*1/3 = 0.17.
	if want := []uint64{2, 3, 1}; !slices.Equal(ids(got), want) {
		t.Errorf("order %v, want %v (the allergy turn found through the expansion)", ids(got), want)
	}
	src.queries = nil
	if _, err := run(&retrieve.Options{Stages: retrieve.StageText}, &retrieve.Query{Text: "food allergy", K: 3, Candidates: 3}, src); err != nil || len(src.queries) != 1 {
		t.Errorf("without prf: %d searches (%v), want 1", len(src.queries), err)
	}
}

// TestPRFPool: the second search may rescore the first pass's candidates
// instead of searching every record once the expanded question's
// postings exceed PRFOptions.Postings; the first search never may, nor
// the second with a negative Postings.
func TestPRFPool(t *testing.T) {
	for _, tt := range []struct {
		name     string
		postings int
		pool     []uint64
		want     int
	}{
		{"default", 0, []uint64{2, 1}, retrieve.DefaultPRFPostings},
		{"set", 500, []uint64{2, 1}, 500},
		{"no bound", -1, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := &prfSource{fakeSource: fakeSource{
				text: []retrieve.Hit{{ID: 2, Score: 3}, {ID: 1, Score: 1}},
				docs: map[uint64]retrieve.Doc{
					1: {ID: 1, Text: "the Portuguese tutor"},
					2: {ID: 2, Text: "no shellfish, shellfish is awkward, try local food"},
				},
			}}
			o := &retrieve.Options{Stages: retrieve.StageText | retrieve.StagePRF, PRF: retrieve.PRFOptions{Docs: 1, Terms: 2, Postings: tt.postings}}
			if _, err := run(o, &retrieve.Query{Text: "food allergy", K: 3, Candidates: 3}, src); err != nil {
				t.Fatal(err)
			}
			if len(src.asked) != 2 {
				t.Fatalf("%d searches, want 2", len(src.asked))
			}
			if first := src.asked[0]; first.TextPool != nil || first.TextPostings != 0 {
				t.Errorf("first search: pool %v, %d postings; want none", first.TextPool, first.TextPostings)
			}
			if second := src.asked[1]; !slices.Equal(second.TextPool, tt.pool) || second.TextPostings != tt.want {
				t.Errorf("second search: pool %v, %d postings; want %v, %d", second.TextPool, second.TextPostings, tt.pool, tt.want)
			}
		})
	}
}

// treeSource adds a segment tree to fakeSource.
type treeSource struct {
	fakeSource
	forest *retrieve.Forest
}

func (s *treeSource) Segments([]uint64, int) (*retrieve.Forest, error) { return s.forest, nil }

func TestPropagation(t *testing.T) {
	// Segment 10 holds records 1, 2, 3; segment 20 holds 4; both under 30.
	forest := &retrieve.Forest{
		Parent: map[uint64]uint64{1: 10, 2: 10, 3: 10, 4: 20},
		Nodes: map[uint64]*retrieve.Segment{
			10: {ID: 10, Parent: 30, Level: 1, Children: []uint64{1, 2, 3}},
			20: {ID: 20, Parent: 30, Level: 1, Children: []uint64{4}},
			30: {ID: 30, Level: 2, Children: []uint64{10, 20}},
		},
	}
	src := &treeSource{
		fakeSource: fakeSource{text: []retrieve.Hit{{ID: 1, Score: 1}, {ID: 4, Score: 0.9}, {ID: 2, Score: 0}}},
		forest:     forest,
	}
	got, err := run(&retrieve.Options{Stages: retrieve.StageText | retrieve.StageSegTree, Propagation: retrieve.PropagationOptions{Alpha: 0.5, Hops: 2}},
		&retrieve.Query{Text: "q", K: 4, Candidates: 4}, src)
	if err != nil {
		t.Fatal(err)
	}
	// Local scores: 1 -> 1, 4 -> 0.9, 2 -> 0; segment 10 -> 1, 20 -> 0.9,
	// 30 -> 1. Each child of 10 gets 0.5*1/3 + 0.25*1/(2*3); of 20,
	// 0.5*0.9 + 0.25*1/2. The sum is divided by 1 + 0.5 + 0.25.
	g10 := 0.5/3 + 0.25/6
	g20 := 0.45 + 0.125
	want := map[uint64]float64{1: (1 + g10) / 1.75, 4: (0.9 + g20) / 1.75, 2: g10 / 1.75, 3: g10 / 1.75}
	if len(got) != 4 {
		t.Fatalf("%d candidates %v, want 4 (record 3 joins through its segment)", len(got), ids(got))
	}
	for _, c := range got {
		if d := c.Score - want[c.ID]; d > 1e-9 || d < -1e-9 {
			t.Errorf("record %d: %.4f, want %.4f", c.ID, c.Score, want[c.ID])
		}
	}
	if !slices.Equal(ids(got)[:2], []uint64{4, 1}) {
		t.Errorf("order %v: the record alone in its segment takes its segment's whole share", ids(got))
	}
}

// lexSource embeds words as fixed vectors.
type lexSource struct {
	fakeSource
	vecs map[string][]float32
}

func (l *lexSource) WordVectors(words []string) ([][]float32, error) {
	out := make([][]float32, len(words))
	for i, w := range words {
		out[i] = l.vecs[w]
	}
	return out, nil
}

func TestWordSim(t *testing.T) {
	src := &lexSource{
		fakeSource: fakeSource{
			text: []retrieve.Hit{{ID: 1, Score: 2}, {ID: 2, Score: 1}},
			docs: map[uint64]retrieve.Doc{
				1: {ID: 1, Speaker: "Ann", Text: "the weather is nice"},
				2: {ID: 2, Speaker: "Ann", Text: "I'm allergic to shellfish"},
			},
		},
		vecs: map[string][]float32{
			"allergy": {1, 0}, "allergic": {0.9, 0.436}, "shellfish": {0, 1},
			"weather": {0, -1}, "nice": {-1, 0}, "food": {0.6, 0.8},
		},
	}
	got, err := run(&retrieve.Options{Stages: retrieve.StageText | retrieve.StageWordSim, Priors: retrieve.PriorOptions{WordSim: 2}},
		&retrieve.Query{Text: "Ann's food allergy", K: 2, Candidates: 2}, src)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{2, 1}; !slices.Equal(ids(got), want) {
		t.Errorf("order %v, want %v (allergic ~ allergy, shellfish ~ food)", ids(got), want)
	}
}
