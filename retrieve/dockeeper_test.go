package retrieve_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/retrieve"
)

// keeperSource is a fakeSource that keeps its documents and hands them
// out in place (retrieve.DocKeeper).
type keeperSource struct {
	fakeSource
	kept map[uint64]*retrieve.Doc
	refs int // DocRefs calls
}

func (k *keeperSource) DocRefs(ids []uint64) []*retrieve.Doc {
	k.refs++
	out := make([]*retrieve.Doc, len(ids))
	for i, id := range ids {
		out[i] = k.kept[id]
	}
	return out
}

// A source that hands out the documents it keeps (DocKeeper) ranks
// every question as one that hands out copies of the same documents:
// the same candidates in the same order, every score to the bit; and
// its documents are as they were. The documents mix speakers (an
// agent's replies among them), sessions, times, derived records and
// contexts; some are analysed, some not, one candidate has none.
func TestDocKeeperRanksAsCopies(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	words := []string{"lake", "garden", "painted", "sunrise", "Caroline", "Melanie", "adoption", "yesterday", "May", "shellfish", "allergic", "cat", "Pixel", "trip", "Paris"}
	text := func(n int) string {
		s := ""
		for i := range n {
			if i > 0 {
				s += " "
			}
			s += words[r.IntN(len(words))]
		}
		return s
	}
	base := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	docs := map[uint64]retrieve.Doc{}
	for id := uint64(1); id <= 60; id++ {
		if id == 17 {
			continue // a candidate with no document
		}
		d := retrieve.Doc{ID: id, Session: fmt.Sprintf("s%d", id%4), Speaker: []string{"Caroline", "Melanie", "assistant", "user"}[r.IntN(4)],
			Time: base.Add(time.Duration(id) * time.Hour), Text: text(3 + r.IntN(8)), Derived: id%11 == 0}
		if id > 1 && r.IntN(2) == 0 {
			d.Prev, d.Context = id-1, id-1
		}
		if r.IntN(3) != 0 {
			d.Analyse()
		}
		docs[id] = d
	}
	hits := func(n int, scale float64) []retrieve.Hit {
		out := make([]retrieve.Hit, 0, n)
		for _, id := range r.Perm(60)[:n] {
			out = append(out, retrieve.Hit{ID: uint64(id + 1), Score: scale * r.Float64(), Coverage: r.Float64()})
		}
		slicesSortHits(out)
		return out
	}
	for i := range 40 {
		q := &retrieve.Query{Text: []string{"when did Caroline go to the lake", "what is the name of the cat", "what did Melanie paint in May",
			"what am I allergic to", "Caroline and Melanie both like what"}[i%5] + " " + text(r.IntN(3)),
			Vector: []float32{1}, K: 10, Candidates: 50, Now: base.Add(1000 * time.Hour)}
		th, vh := hits(30+r.IntN(25), 10), hits(30+r.IntN(25), 1)
		want, err := run(nil, q, &fakeSource{text: th, vec: vh, docs: docs})
		if err != nil {
			t.Fatal(err)
		}
		kept := map[uint64]*retrieve.Doc{}
		before := map[uint64]retrieve.Doc{}
		for id, d := range docs {
			kept[id], before[id] = &d, d
		}
		src := &keeperSource{fakeSource: fakeSource{text: th, vec: vh, docs: docs}, kept: kept}
		got, err := run(nil, &retrieve.Query{Text: q.Text, Vector: q.Vector, K: q.K, Candidates: q.Candidates, Now: q.Now}, src)
		if err != nil {
			t.Fatal(err)
		}
		if src.refs == 0 {
			t.Fatal("the pipeline did not ask the source for its documents in place")
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d candidates, %d from copies", q.Text, len(got), len(want))
		}
		for j := range got {
			g, w := got[j], want[j]
			if g.ID != w.ID || !sameBits(g.Score, w.Score) || !sameBits(g.Text, w.Text) || !sameBits(g.Vector, w.Vector) || !sameBits(g.Fused, w.Fused) ||
				!sameBits(g.Relevance, w.Relevance) || !sameBits(g.OwnCoverage, w.OwnCoverage) || !sameBits(g.Coverage, w.Coverage) {
				t.Fatalf("%q: candidate %d is %+v, %+v from copies", q.Text, j, g, w)
			}
		}
		for id, d := range kept {
			if !reflect.DeepEqual(*d, before[id]) {
				t.Fatalf("document %d changed: %+v, was %+v", id, *d, before[id])
			}
		}
	}
}

func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// slicesSortHits orders hits best first.
func slicesSortHits(h []retrieve.Hit) {
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && h[j].Score > h[j-1].Score; j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}
