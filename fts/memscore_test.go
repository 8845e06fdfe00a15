package fts

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A Memory search scores a posting exactly as termScore does, to the
// last bit, for random frequencies, lengths, statistics and scorings
// (empty fields, an empty collection, fields of no length included).
func TestMemScorerIsTermScore(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 200000 {
		s, err := Scoring{}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			s = Scoring{K1: 0.1 + 3*r.Float64(), B: r.Float64(), ContextWeight: r.Float64(), RoleWeight: 2 * r.Float64()}
		}
		st := fieldStats{n: float64(r.IntN(5000))}
		for f := range nFields {
			if r.IntN(5) > 0 {
				st.total[f] = float64(r.IntN(200000))
			}
		}
		d := &memDoc{}
		post := &memPost{}
		var tf, dl [nFields]float64
		for f := range nFields {
			if r.IntN(3) > 0 {
				post.tf[f] = int32(r.IntN(6))
			}
			d.n[f] = r.IntN(80)
			tf[f], dl[f] = float64(post.tf[f]), float64(d.n[f])
		}
		idf := 10 * r.Float64()
		got := newMemScorer(&s, &st).score(idf, post, d)
		want := s.termScore(idf, &st, &tf, &dl)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("case %d: score %v, termScore %v (%+v, %+v, tf %v, dl %v)", i, got, want, s, st, tf, dl)
		}
	}
}
