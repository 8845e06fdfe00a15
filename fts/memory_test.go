package fts_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
)

func TestMemoryAgreesWithIndexOnTop(t *testing.T) {
	docs := []engine.TextDoc{
		{ID: 1, Text: "Caroline went to the LGBTQ support group on Tuesday", Scope: "a"},
		{ID: 2, Text: "Melanie painted a sunrise over the lake", Scope: "a"},
		{ID: 3, Text: "The support beams of the bridge were painted red", Scope: "b"},
		{ID: 4, Text: "Caroline is researching adoption agencies", Scope: "b"},
	}
	mem, err := fts.NewMemory("")
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Apply(docs, nil, 7); err != nil {
		t.Fatal(err)
	}
	disk, err := fts.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	if err := disk.Apply(docs, nil, 7); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"support group", "painting sunrise", "adopting", "Caroline"} {
		got, err := mem.Search(context.Background(), q, 1, engine.TextFilter{})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := disk.Search(context.Background(), q, 1, engine.TextFilter{})
		if len(got) != 1 || len(want) != 1 || got[0].ID != want[0].ID {
			t.Errorf("Search(%q) top: memory %v, bleve %v", q, got, want)
		}
	}
	if wm, _ := mem.Watermark(); wm != 7 {
		t.Errorf("Watermark = %d, want 7", wm)
	}
}

func TestMemoryFiltersDeletesReplaces(t *testing.T) {
	mem, _ := fts.NewMemory("")
	day := func(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }
	mem.Apply([]engine.TextDoc{
		{ID: 1, Text: "garden roses", Scope: "x", Session: "s1", Time: day(1)},
		{ID: 2, Text: "garden tulips", Scope: "y", Session: "s2", Time: day(2)},
		{ID: 3, Text: "garden lilies", Scope: "x", Session: "s3", Time: day(3)},
	}, nil, 1)
	ctx := context.Background()
	tests := []struct {
		name string
		f    engine.TextFilter
		want []uint64
	}{
		{"scope", engine.TextFilter{Scope: "x"}, []uint64{1, 3}},
		{"session", engine.TextFilter{Session: "s2"}, []uint64{2}},
		{"time", engine.TextFilter{From: day(2), To: day(3)}, []uint64{2}},
	}
	for _, tt := range tests {
		hits, err := mem.Search(ctx, "garden", 10, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, h := range hits {
			got = append(got, h.ID)
		}
		if len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	mem.Apply([]engine.TextDoc{{ID: 1, Text: "kitchen knives"}}, []uint64{2}, 2)
	if hits, _ := mem.Search(ctx, "garden", 10, engine.TextFilter{}); len(hits) != 1 || hits[0].ID != 3 {
		t.Errorf("after replace and delete: %v, want only 3", hits)
	}
	if mem.Len() != 2 {
		t.Errorf("Len = %d, want 2", mem.Len())
	}
	if _, err := mem.Search(ctx, "x", 0, engine.TextFilter{}); !errors.Is(err, fts.ErrInvalidK) {
		t.Errorf("k=0 err = %v, want ErrInvalidK", err)
	}
}

func TestMemoryCoverage(t *testing.T) {
	mem, err := fts.NewMemory("")
	if err != nil {
		t.Fatal(err)
	}
	mem.Apply([]engine.TextDoc{
		{ID: 1, Text: "Caroline went to the support group"},
		{ID: 2, Text: "Melanie painted a sunrise"},
		{ID: 3, Text: "Melanie joined a support group"},
	}, nil, 1)
	tests := []struct {
		query string
		id    uint64
		want  float64 // coverage of doc id
	}{
		{"support group", 1, 1},
		{"Caroline support group", 1, 1},
		{"the Caroline", 1, 1},                        // stop words do not count
		{"Melanie painted sunrise yesterday", 2, 0.5}, // "yesterday" is in no document
	}
	for _, tt := range tests {
		hits, err := mem.Search(context.Background(), tt.query, 3, engine.TextFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var got float64 = -1
		for _, h := range hits {
			if h.ID == tt.id {
				got = h.Coverage
			}
			if h.Coverage < 0 || h.Coverage > 1+1e-9 {
				t.Errorf("Search(%q) doc %d coverage %v outside [0, 1]", tt.query, h.ID, h.Coverage)
			}
		}
		if tt.want == 1 && math.Abs(got-1) > 1e-9 {
			t.Errorf("Search(%q) doc %d coverage = %v, want 1", tt.query, tt.id, got)
		}
		if tt.want < 1 && !(got > 0 && got < 1) {
			t.Errorf("Search(%q) doc %d coverage = %v, want strictly between 0 and 1", tt.query, tt.id, got)
		}
	}
	// A rarer term weighs more: doc 1 holds "caroline" (rare), doc 3
	// "melanie" (in two docs); the query names both.
	hits, _ := mem.Search(context.Background(), "caroline melanie", 3, engine.TextFilter{})
	cov := map[uint64]float64{}
	for _, h := range hits {
		cov[h.ID] = h.Coverage
	}
	if cov[1] <= cov[3] {
		t.Errorf("coverage caroline-doc %v, melanie-doc %v: want the rarer term to weigh more", cov[1], cov[3])
	}
}

// TestMemorySharedAnalysis: indexes sharing an Analysed answer as
// indexes that analyse every document themselves, through moves between
// them, replaced texts under the same id and evictions from a small cache.
func TestMemorySharedAnalysis(t *testing.T) {
	shared := fts.NewAnalysed(5)
	var withCache, without [2]*fts.Memory
	for i := range 2 {
		var err error
		if withCache[i], err = fts.NewMemoryWith(&fts.Options{Analysed: shared}); err != nil {
			t.Fatal(err)
		}
		if without[i], err = fts.NewMemory(""); err != nil {
			t.Fatal(err)
		}
	}
	doc := func(id uint64, text string) engine.TextDoc {
		return engine.TextDoc{ID: id, Text: text, Context: "the turn before " + text, Role: "user"}
	}
	type step struct {
		index int // 0 or 1
		add   []engine.TextDoc
		del   []uint64
	}
	steps := []step{
		{0, []engine.TextDoc{doc(1, "cats sleep all day"), doc(2, "dogs run in the park"), doc(3, "shellfish allergy"), doc(4, "running shoes")}, nil},
		{1, []engine.TextDoc{doc(1, "cats sleep all day"), doc(2, "dogs run in the park")}, nil}, // held in both
		{0, nil, []uint64{1, 2}}, // moved to index 1
		{1, []engine.TextDoc{doc(3, "peanut allergy and cats")}, nil},                    // same id, new text
		{0, []engine.TextDoc{doc(5, "a park run"), doc(6, "dogs"), doc(7, "cats")}, nil}, // evicts older entries
		{0, []engine.TextDoc{doc(3, "shellfish allergy"), doc(1, "cats sleep all day")}, nil},
		{1, nil, []uint64{3}},
	}
	queries := []string{"cats", "allergy", "dogs park run", "shellfish peanut", "turn before user"}
	for n, s := range steps {
		for _, x := range []*fts.Memory{withCache[s.index], without[s.index]} {
			if err := x.Apply(s.add, s.del, 0); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 2 {
			for _, q := range queries {
				got, err := withCache[i].Search(context.Background(), q, 10, engine.TextFilter{})
				if err != nil {
					t.Fatal(err)
				}
				want, _ := without[i].Search(context.Background(), q, 10, engine.TextFilter{})
				if !reflect.DeepEqual(got, want) {
					t.Errorf("step %d, index %d, %q: %v, want %v", n, i, q, got, want)
				}
			}
		}
	}
	if _, err := fts.NewMemoryWith(&fts.Options{Analyzer: fts.AnalyzerPlain, Analysed: shared}); !errors.Is(err, fts.ErrInvalidOption) {
		t.Errorf("an Analysed shared by two analyzers: %v, want ErrInvalidOption", err)
	}
}

// TestMemoryTopKIsExact: a search for the k best (which stops taking new
// documents once the words left cannot lift one into the top k) returns
// the first k of the search for every match.
func TestMemoryTopKIsExact(t *testing.T) {
	docs, queries := memoryDocs(3000)
	for i := range docs {
		docs[i].Scope = []string{"a", "b", "c"}[i%3]
	}
	m, err := fts.NewMemory("")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Apply(docs, nil, 0); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, f := range []engine.TextFilter{{}, {Scope: "b"}, {Scope: "none"}} {
		for _, q := range queries {
			all, err := m.Search(ctx, q, len(docs), f)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []int{1, 10, 100} {
				// The floor hint: none, the k-th score (k documents
				// reach it), below it, and above the best.
				floors := []float64{0}
				if len(all) >= k {
					floors = append(floors, all[k-1].Score, all[k-1].Score/2, 2*all[0].Score)
				}
				for _, floor := range floors {
					ff := f
					ff.Floor = floor
					got, err := m.Search(ctx, q, k, ff)
					if err != nil {
						t.Fatal(err)
					}
					if want := all[:min(k, len(all))]; !reflect.DeepEqual(got, want) {
						t.Fatalf("%q %+v k=%d:\n got %v\nwant %v", q, ff, k, got, want)
					}
				}
			}
		}
	}
}

// A search's allocations do not grow with the documents it scores: two
// words in every one of 4,000 documents cost no more allocations than two
// words in one (the tier walk searches a tier's index for short questions
// of common words on most queries).
func TestMemorySearchAllocationsIndependentOfMatches(t *testing.T) {
	if raceEnabled {
		t.Skip("-race: sync.Pool drops items at random")
	}
	docs := make([]engine.TextDoc, 4000)
	for i := range docs {
		docs[i] = engine.TextDoc{ID: uint64(i + 1), Text: fmt.Sprintf("common garden note %d", i)}
	}
	docs[7].Text = "common garden note with a rare zeppelin"
	m, err := fts.NewMemory("")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Apply(docs, nil, 1); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	allocs := func(q string) float64 {
		return testing.AllocsPerRun(20, func() {
			if hits, err := m.Search(ctx, q, 10, engine.TextFilter{}); err != nil || len(hits) == 0 {
				t.Fatalf("Search(%q) = %v, %v", q, hits, err)
			}
		})
	}
	rare, common := allocs("rare zeppelin"), allocs("common garden")
	if common > rare+2 {
		t.Errorf("allocations per search: %v for words in every document, %v for words in one", common, rare)
	}
}

// A Memory that has seen many changes (documents added in batches,
// replaced, deleted, across scopes, as the tiers move records in and
// out) answers every search and HoldsAll as one built afresh from the
// documents it holds: each document's postings are found and removed
// from wherever earlier removals moved them.
func TestMemoryChurnMatchesFresh(t *testing.T) {
	docs, queries := memoryDocs(1500)
	scopes := []string{"a", "b", "c"}
	churned, err := fts.NewMemoryWith(&fts.Options{Analysed: fts.NewAnalysed(500)})
	if err != nil {
		t.Fatal(err)
	}
	held := map[uint64]engine.TextDoc{}
	r := rand.New(rand.NewPCG(1, 2))
	for step := range 400 {
		var add []engine.TextDoc
		var del []uint64
		for range 1 + r.IntN(12) {
			d := docs[r.IntN(len(docs))]
			d.Scope = scopes[r.IntN(len(scopes))]
			if r.IntN(4) == 0 { // a new text for a held id
				d.Text = docs[r.IntN(len(docs))].Text
			}
			add = append(add, d)
		}
		for id := range held {
			if len(del) > r.IntN(10) {
				break
			}
			del = append(del, id)
		}
		if err := churned.Apply(add, del, uint64(step)); err != nil {
			t.Fatal(err)
		}
		for _, id := range del {
			delete(held, id)
		}
		for _, d := range add {
			held[d.ID] = d
		}
	}
	fresh, err := fts.NewMemory("")
	if err != nil {
		t.Fatal(err)
	}
	survivors := make([]engine.TextDoc, 0, len(held))
	for _, d := range held {
		survivors = append(survivors, d)
	}
	if err := fresh.Apply(survivors, nil, 0); err != nil {
		t.Fatal(err)
	}
	if churned.Len() != fresh.Len() {
		t.Fatalf("%d documents, want %d", churned.Len(), fresh.Len())
	}
	ctx := context.Background()
	for _, f := range []engine.TextFilter{{}, {Scope: "b"}} {
		for _, q := range queries {
			for _, k := range []int{1, 10, 1000} {
				got, err := churned.Search(ctx, q, k, f)
				if err != nil {
					t.Fatal(err)
				}
				want, err := fresh.Search(ctx, q, k, f)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%q %+v k=%d:\n got %v\nwant %v", q, f, k, got, want)
				}
			}
			keep := func(id uint64) bool { return id%2 == 0 }
			for _, words := range []string{q, q[:len(q)/2]} {
				g, err1 := churned.HoldsAll(ctx, words, keep)
				w, err2 := fresh.HoldsAll(ctx, words, keep)
				if err1 != nil || err2 != nil || g != w {
					t.Fatalf("HoldsAll(%q) = %v, %v; want %v, %v", words, g, err1, w, err2)
				}
			}
		}
	}
}

// A question of many words (more than the 64 a Memory search keeps each
// word's score for, and fewer) scores and covers each of the best
// documents as Index does.
func TestMemoryManyWordsAgreeWithIndex(t *testing.T) {
	docs, _ := memoryDocs(2000)
	mem, err := fts.NewMemory("")
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Apply(docs, nil, 1); err != nil {
		t.Fatal(err)
	}
	disk, err := fts.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	if err := disk.Apply(docs, nil, 1); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, n := range []int{1, 30, 64, 65, 90} {
		q := ""
		for i := range n {
			q += fmt.Sprintf("w%d ", 2+i*3) // common and rare words of the zipf vocabulary
		}
		got, err := mem.Search(ctx, q, 50, engine.TextFilter{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := disk.Search(ctx, q, 50, engine.TextFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("%d words: %d hits, Index %d", n, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.ID != w.ID || math.Abs(g.Score-w.Score) > 1e-9*w.Score || math.Abs(g.Coverage-w.Coverage) > 1e-9 {
				t.Errorf("%d words, hit %d: Memory %+v, Index %+v", n, i, g, w)
			}
		}
	}
}
