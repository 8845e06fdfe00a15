package fts

import (
	"context"
	"errors"
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
	eachWay(t, testTopKIsExact)
}

// eachWay runs test with the way of searching a segment chosen by cost,
// and forced to MaxScore and to accumulating in every segment.
func eachWay(t *testing.T, test func(t *testing.T)) {
	defer func() { forceMaxScore, forceAccumulate = false, false }()
	for _, c := range []struct {
		name                 string
		maxScore, accumulate bool
	}{{"way=cost", false, false}, {"way=maxscore", true, false}, {"way=accumulate", false, true}} {
		forceMaxScore, forceAccumulate = c.maxScore, c.accumulate
		t.Run(c.name, test)
	}
}

// TestAccumulateIsMaxScore: accumulating a segment's sums gives the very
// hits MaxScore gives, scores and coverage equal to the last bit, ties at
// the k-th place decided alike, with every filter, floor and k.
func TestAccumulateIsMaxScore(t *testing.T) {
	defer func() { forceMaxScore, forceAccumulate = false, false }()
	x, live := segmentedIndex(t)
	ctx := context.Background()
	compared := 0
	for _, q := range append(queries, "cat cat budget Paris", "budget report Paris meeting cat") {
		for _, f := range filters() {
			want := x.bruteForce(t, q, f, live)
			for _, k := range []int{1, 3, 7, 100, 2000} {
				floors := []float64{0}
				if len(want) >= k {
					floors = append(floors, want[k-1].Score, want[k-1].Score/2)
				}
				for _, floor := range floors {
					ff := f
					ff.Floor = floor
					forceMaxScore, forceAccumulate = true, false
					ms, err := x.Search(ctx, q, k, ff)
					if err != nil {
						t.Fatal(err)
					}
					forceMaxScore, forceAccumulate = false, true
					acc, err := x.Search(ctx, q, k, ff)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(ms, acc) {
						t.Errorf("%q %+v k=%d: accumulating gave\n%v\nMaxScore\n%v", q, ff, k, acc, ms)
					}
					compared += len(ms)
				}
			}
		}
	}
	if compared == 0 {
		t.Fatal("no query matched anything")
	}
}

func testTopKIsExact(t *testing.T) {
	x, live := segmentedIndex(t)
	ctx := context.Background()
	checked := 0
	for _, q := range queries {
		for _, f := range filters() {
			want := x.bruteForce(t, q, f, live)
			for _, k := range []int{1, 7, 100, 2000} {
				// The floor hint: none, the k-th score itself (k
				// documents reach it), below it, and above the best (the
				// search must notice too few reach it).
				floors := []float64{0}
				if len(want) >= k {
					floors = append(floors, want[k-1].Score, want[k-1].Score/2, 2*want[0].Score)
				}
				for _, floor := range floors {
					ff := f
					ff.Floor = floor
					got, err := x.Search(ctx, q, k, ff)
					if err != nil {
						t.Fatal(err)
					}
					sameTop(t, fmt.Sprintf("%q %+v k=%d", q, ff, k), got, want[:min(k, len(want))])
					checked += len(got)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no query matched anything")
	}
}

// segmentedIndex is an index of 1,200 documents in several segments,
// some deleted and some replaced, with its live documents.
func segmentedIndex(t *testing.T) (*Index, map[uint64]engine.TextDoc) {
	t.Helper()
	docs := corpus(1200)
	x, err := Open(filepath.Join(t.TempDir(), "text"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
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
	return x, live
}

// TestSearchPool: while the query's words have no more postings than
// the budget, SearchPool is Search and never asks for the pool; beyond
// it, its hits are the best of the pool's documents that pass the
// filter, with the very scores and coverage the exhaustive search gives
// them (the pool documents are analysed again, not looked up).
func TestSearchPool(t *testing.T) {
	x, live := segmentedIndex(t)
	var pool []engine.TextDoc
	inPool := map[uint64]bool{}
	for id := uint64(1); id <= 1200; id += 7 {
		if d, ok := live[id]; ok {
			pool = append(pool, d)
			inPool[id] = true
		}
	}
	pool = append(pool, live[10], live[501]) // a replaced document, and one given twice
	inPool[10], inPool[501] = true, true
	ctx := context.Background()
	calls := 0
	docs := func() ([]engine.TextDoc, error) { calls++; return pool, nil }
	checked := 0
	for _, q := range queries {
		for _, f := range filters() {
			want := x.bruteForce(t, q, f, live)
			var wantPool []engine.TextHit
			for _, h := range want {
				if inPool[h.ID] {
					wantPool = append(wantPool, h)
				}
			}
			for _, k := range []int{1, 7, 100, 2000} {
				what := fmt.Sprintf("%q %+v k=%d", q, f, k)
				calls = 0
				got, err := x.SearchPool(ctx, q, k, f, engine.TextPool{Docs: docs, Postings: 1 << 30})
				if err != nil {
					t.Fatal(err)
				}
				sameTop(t, what+" within the budget", got, want[:min(k, len(want))])
				if calls != 0 {
					t.Errorf("%s: within the budget the pool was asked for %d times", what, calls)
				}
				got, err = x.SearchPool(ctx, q, k, f, engine.TextPool{Docs: docs, Postings: 1})
				if err != nil {
					t.Fatal(err)
				}
				sameTop(t, what+" beyond the budget", got, wantPool[:min(k, len(wantPool))])
				checked += len(got)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no pool document matched anything")
	}
	fail := errors.New("no documents")
	if _, err := x.SearchPool(ctx, "cat", 5, engine.TextFilter{}, engine.TextPool{Docs: func() ([]engine.TextDoc, error) { return nil, fail }, Postings: 1}); !errors.Is(err, fail) {
		t.Errorf("a pool that fails: %v, want its error", err)
	}
	for _, p := range []engine.TextPool{{Docs: docs}, {Docs: docs, Postings: -1}, {Postings: 10}} {
		if _, err := x.SearchPool(ctx, "cat", 5, engine.TextFilter{}, p); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("SearchPool(%d postings, docs %t) = %v, want ErrInvalidOption", p.Postings, p.Docs != nil, err)
		}
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
	return x.bruteForceIn(t, r, q, f, live)
}

// bruteForceIn is bruteForce in snapshot r, whose live documents are live.
func (x *Index) bruteForceIn(t *testing.T, r index.IndexReader, q string, f engine.TextFilter, live map[uint64]engine.TextDoc) []engine.TextHit {
	t.Helper()
	type cand struct {
		id  uint64
		iid string
	}
	var cands []cand
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
		cands = append(cands, cand{id, string(iid)})
	}
	// Every posting of every word, by internal id.
	n, err := r.DocCount()
	if err != nil {
		t.Fatal(err)
	}
	tb, err := r.GetInternal(keyLengths)
	if err != nil {
		t.Fatal(err)
	}
	tot, err := decodeTotals(tb)
	if err != nil {
		t.Fatal(err)
	}
	st := fieldStats{n: float64(n)}
	for f := range nFields {
		st.total[f] = float64(tot[f])
	}
	terms := distinct(x.terms(q))
	type post struct{ tf, dl [nFields]float64 }
	posts := make([]map[string]*post, len(terms))
	idfs := make([]float64, len(terms))
	var idfSum float64
	for ti, term := range terms {
		posts[ti] = map[string]*post{}
		var df uint64
		for f, field := range bm25Fields {
			tfr, err := r.TermFieldReader(context.Background(), []byte(term), field, true, true, false)
			if err != nil {
				t.Fatal(err)
			}
			df = max(df, tfr.Count())
			for {
				d, err := tfr.Next(nil)
				if err != nil {
					t.Fatal(err)
				}
				if d == nil {
					break
				}
				p := posts[ti][string(d.ID)]
				if p == nil {
					p = &post{}
					posts[ti][string(d.ID)] = p
				}
				p.tf[f] = float64(d.Freq)
				if d.Norm > 0 {
					p.dl[f] = math.Round(1 / (d.Norm * d.Norm))
				}
			}
			tfr.Close()
		}
		idfs[ti] = idf(st.n, float64(df))
		idfSum += idfs[ti]
	}
	var hits []engine.TextHit
	for _, c := range cands {
		h := engine.TextHit{ID: c.id}
		for ti := range terms {
			if p := posts[ti][c.iid]; p != nil {
				h.Score += x.scoring.termScore(idfs[ti], &st, &p.tf, &p.dl)
				if p.tf[fText] > 0 {
					h.Coverage += idfs[ti] / idfSum
				}
			}
		}
		if h.Score > 0 {
			hits = append(hits, h)
		}
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
		if got[i].ID == want[i].ID && math.Abs(got[i].Coverage-want[i].Coverage) > 1e-9 {
			t.Errorf("%s: hit %d (%d) covers %v, want %v", what, i, got[i].ID, got[i].Coverage, want[i].Coverage)
			return
		}
	}
}
