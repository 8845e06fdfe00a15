package fts_test

import (
	"context"
	"math"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
)

// bm25Docs: with the plain analyzer (lower-casing only) the field lengths
// are text 3, 2, 4 (mean 3), context 0, 1, 0 (mean 1/3), role 1, 1, 1
// (mean 1), over N = 3 documents.
var bm25Docs = []engine.TextDoc{
	{ID: 1, Text: "apple banana apple", Role: "Ann"},
	{ID: 2, Text: "banana cherry", Context: "apple", Role: "Bob"},
	{ID: 3, Text: "cherry date elder fig", Role: "Ann"},
}

// TestBM25Hand checks both indexes against scores computed by hand from
// the formula in Scoring's documentation, k1 1.2, b 0.75, context weight
// 0.5, role weight 1.
func TestBM25Hand(t *testing.T) {
	// apple: in the text of 1 and the context of 2: df = max(1, 1, 0) = 1.
	idfApple := math.Log(1 + (3-1+0.5)/(1+0.5))
	// ann: the role of 1 and 3: df = 2.
	idfAnn := math.Log(1 + (3-2+0.5)/(2+0.5))
	// 1: tf 2 in text of length 3 = mean: tf~ = 2.
	apple1 := idfApple * 2 * 2.2 / (1.2 + 2)
	// 2: tf 1 in context of length 1, mean 1/3: tf~ = 0.5 * 1/(0.25 + 0.75*3) = 0.2.
	apple2 := idfApple * 0.2 * 2.2 / (1.2 + 0.2)
	// ann in a role of length 1 = mean: tf~ = 1.
	ann := idfAnn * 1 * 2.2 / (1.2 + 1)
	for _, tc := range []struct {
		q    string
		want map[uint64]float64
	}{
		{"apple", map[uint64]float64{1: apple1, 2: apple2}},
		{"apple apple APPLE", map[uint64]float64{1: apple1, 2: apple2}}, // a repeated word counts once
		{"ann apple", map[uint64]float64{1: apple1 + ann, 2: apple2, 3: ann}},
		{"zebra", map[uint64]float64{}},
	} {
		disk := open(t, &fts.Options{Analyzer: fts.AnalyzerPlain})
		apply(t, disk, bm25Docs, nil, 1)
		mem, err := fts.NewMemoryWith(&fts.Options{Analyzer: fts.AnalyzerPlain})
		if err != nil {
			t.Fatal(err)
		}
		if err := mem.Apply(bm25Docs, nil, 1); err != nil {
			t.Fatal(err)
		}
		for name, x := range map[string]engine.TextIndex{"Index": disk, "Memory": mem} {
			hits, err := x.Search(context.Background(), tc.q, 10, engine.TextFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != len(tc.want) {
				t.Errorf("%s %q: %d hits %v, want %d", name, tc.q, len(hits), hits, len(tc.want))
			}
			for _, h := range hits {
				if w, ok := tc.want[h.ID]; !ok || math.Abs(h.Score-w) > 1e-5 {
					t.Errorf("%s %q: doc %d score %.6f, want %.6f", name, tc.q, h.ID, h.Score, w)
				}
			}
		}
	}
}

// TestBM25LengthsFollowDeletes checks that the average lengths follow
// deletes and replacements: after deleting 3 and replacing 2, the scores
// are those of the remaining collection computed by hand.
func TestBM25LengthsFollowDeletes(t *testing.T) {
	disk := open(t, &fts.Options{Analyzer: fts.AnalyzerPlain})
	apply(t, disk, bm25Docs, nil, 1)
	apply(t, disk, []engine.TextDoc{{ID: 2, Text: "banana cherry kiwi lime mango", Role: "Bob"}}, []uint64{3}, 2)
	// N = 2; text lengths 3 and 5 (mean 4); apple only in 1: df 1.
	idfApple := math.Log(1 + (2-1+0.5)/(1+0.5))
	tf := 2 / (0.25 + 0.75*3.0/4)
	want := idfApple * tf * 2.2 / (1.2 + tf)
	hits := search(t, disk, "apple", 10, engine.TextFilter{})
	if len(hits) != 1 || hits[0].ID != 1 || math.Abs(hits[0].Score-want) > 1e-5 {
		t.Fatalf("after delete: %v, want doc 1 at %.6f", hits, want)
	}
}
