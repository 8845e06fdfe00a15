package fts

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	index "github.com/blevesearch/bleve_index_api"

	"github.com/hmo-dev/hmo/engine"
)

// TestTopKIsExact: Search's top k is the top k of every live document
// passing the filter, scored by BM25F: MaxScore's pruning drops no
// document that belongs there. The index has several segments, deleted
// and replaced documents; k ranges from one to more than the matches.
func TestTopKIsExact(t *testing.T) {
	docs := corpus(1200)
	x, err := Open(filepath.Join(t.TempDir(), "text"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for i := 0; i < len(docs); i += 100 { // several segments
		if err := x.Apply(docs[i:i+100], nil, uint64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	live := map[uint64]engine.TextDoc{}
	for _, d := range docs {
		live[d.ID] = d
	}
	deleted := []uint64{3, 50, 120, 777, 1100}
	replaced := []engine.TextDoc{docs[10], docs[500]}
	replaced[0].Text, replaced[1].Text = "cat cat cat budget", "Paris"
	if err := x.Apply(replaced, deleted, 2000); err != nil {
		t.Fatal(err)
	}
	for _, id := range deleted {
		delete(live, id)
	}
	for _, d := range replaced {
		live[d.ID] = d
	}
	ctx := context.Background()
	checked := 0
	for _, q := range queries {
		for _, f := range filters() {
			want := x.bruteForce(t, q, f, live)
			for _, k := range []int{1, 7, 100, 2000} {
				got, err := x.Search(ctx, q, k, f)
				if err != nil {
					t.Fatal(err)
				}
				sameTop(t, fmt.Sprintf("%q %+v k=%d", q, f, k), got, want[:min(k, len(want))])
				checked += len(got)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no query matched anything")
	}
}

// bruteForce scores every live document passing f for q, best first.
func (x *Index) bruteForce(t *testing.T, q string, f engine.TextFilter, live map[uint64]engine.TextDoc) []engine.TextHit {
	t.Helper()
	r, err := x.s.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var cands []candidate
	for id, d := range live {
		if !memMatch(&d, engine.TextFilter{Scope: f.Scope, Session: f.Session}) {
			continue
		}
		timed := !f.From.IsZero() || !f.To.IsZero()
		if timed && (d.Time.IsZero() || !f.From.IsZero() && timeKey(d.Time).Before(timeKey(f.From)) ||
			!f.To.IsZero() && !timeKey(d.Time).Before(timeKey(f.To))) {
			continue
		}
		iid, err := r.InternalID(docID(id))
		if err != nil || len(iid) == 0 {
			t.Fatalf("document %d: internal id %v (%v)", id, iid, err)
		}
		cands = append(cands, candidate{iid: slices.Clone(index.IndexInternalID(iid)), id: id})
	}
	hits, err := x.rescore(context.Background(), r, distinct(x.terms(q)), cands)
	if err != nil {
		t.Fatal(err)
	}
	sortHits(hits)
	return hits
}

// sameTop checks that got and want hold the same scores in order and the
// same documents, but for the order of those tied with the last score.
func sameTop(t *testing.T, what string, got, want []engine.TextHit) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d hits, want %d", what, len(got), len(want))
		return
	}
	if len(got) == 0 {
		return
	}
	last := want[len(want)-1].Score
	tied := func(s float64) bool { return math.Abs(s-last) <= 1e-9*math.Max(1, last) }
	for i := range got {
		if math.Abs(got[i].Score-want[i].Score) > 1e-9*math.Max(1, want[i].Score) {
			t.Errorf("%s: hit %d scores %v, want %v", what, i, got[i].Score, want[i].Score)
			return
		}
		if got[i].ID != want[i].ID && !tied(got[i].Score) {
			t.Errorf("%s: hit %d is %d, want %d", what, i, got[i].ID, want[i].ID)
			return
		}
	}
}
