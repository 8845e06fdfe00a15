package retrieve_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/retrieve"
)

// randomHits is n hits of ids drawn from [1, ids] (repeats when dup),
// scores from a few values (ties).
func randomHits(r *rand.Rand, n, ids int, dup bool) []retrieve.Hit {
	out := make([]retrieve.Hit, 0, n)
	seen := map[uint64]bool{}
	for len(out) < n && len(seen) < ids {
		id := uint64(1 + r.IntN(ids))
		if seen[id] && !dup {
			continue
		}
		seen[id] = true
		out = append(out, retrieve.Hit{ID: id, Score: float64(r.IntN(6)) / 2, Coverage: r.Float64()})
	}
	return out
}

// TestFuseUnion: fusion gives one candidate per distinct id, in the order
// the ids first appear (the text list's, then the vector list's new
// ones), with the raw scores of the last hit of each list naming it and
// each hit's share added, for every method, lists sharing none, some or
// all of their ids, one empty, and ids repeated within a list; the
// slice holds at most a quarter more room than its candidates, and no
// more than the two lists' lengths.
func TestFuseUnion(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, method := range []retrieve.Fusion{retrieve.FusionLinear, retrieve.FusionRRF, retrieve.FusionScale} {
		o := &retrieve.FusionOptions{Method: method, TextWeight: 0.7, RRFK: 60}
		for round := range 300 {
			ids := 1 + r.IntN(150)
			dup := round%4 == 3
			text, vec := randomHits(r, r.IntN(120), ids, dup), randomHits(r, r.IntN(120), ids, dup)
			got := retrieve.Fuse(o, text, vec, true, true)
			// The reference: a map of places, the lists walked as the
			// documentation says.
			var want []retrieve.Candidate
			at := map[uint64]int{}
			place := func(id uint64) *retrieve.Candidate {
				i, ok := at[id]
				if !ok {
					i = len(want)
					at[id] = i
					want = append(want, retrieve.Candidate{ID: id})
				}
				return &want[i]
			}
			for _, h := range text {
				c := place(h.ID)
				c.Text, c.Coverage = h.Score, h.Coverage
			}
			for _, h := range vec {
				place(h.ID).Vector = h.Score
			}
			if len(got) != len(want) || cap(got) > len(got)+len(got)/4 || cap(got) > len(text)+len(vec) {
				t.Fatalf("%s round %d: %d candidates (room %d), want %d", method, round, len(got), cap(got), len(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.ID != w.ID || g.Text != w.Text || g.Vector != w.Vector || g.Coverage != w.Coverage || g.Score != g.Fused {
					t.Fatalf("%s round %d: candidate %d is %+v, want %+v", method, round, i, g, w)
				}
			}
			// The fused sums: fusing the lists again with the ids renamed
			// (the places are the same) gives the same scores.
			shift := func(l []retrieve.Hit) []retrieve.Hit {
				l = slices.Clone(l)
				for i := range l {
					l[i].ID += 1 << 40
				}
				return l
			}
			again := retrieve.Fuse(o, shift(text), shift(vec), true, true)
			for i := range got {
				if again[i].Fused != got[i].Fused {
					t.Fatalf("%s round %d: candidate %d fused %v, then %v", method, round, i, got[i].Fused, again[i].Fused)
				}
			}
		}
	}
}

// TestMixListsUnion: the feedback mix has one hit per distinct id of a
// then b (a's repeats kept, as a lists them), each a's share plus b's,
// best first in the stable order of the mixed scores, with no room past
// its hits; for lists sharing none, some or all of their ids, one empty,
// and ids repeated.
func TestMixListsUnion(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for round := range 500 {
		ids := 1 + r.IntN(150)
		dup := round%4 == 3
		a, b := randomHits(r, r.IntN(120), ids, dup), randomHits(r, r.IntN(120), ids, dup)
		w := 0.3
		got := retrieve.MixLists(a, b, w)
		// The reference, with a map and a stable sort.
		max1 := func(l []retrieve.Hit) float64 {
			m := 0.0
			for _, h := range l {
				m = max(m, h.Score)
			}
			if m == 0 {
				return 1
			}
			return m
		}
		ma, mb := max1(a), max1(b)
		var want []retrieve.Hit
		at := map[uint64]int{}
		for _, h := range a {
			at[h.ID] = len(want)
			want = append(want, retrieve.Hit{ID: h.ID, Score: (1 - w) * h.Score / ma, Coverage: h.Coverage})
		}
		for _, h := range b {
			i, ok := at[h.ID]
			if !ok {
				i = len(want)
				at[h.ID] = i
				want = append(want, retrieve.Hit{ID: h.ID})
			}
			want[i].Score += w * h.Score / mb
		}
		slices.SortStableFunc(want, func(x, y retrieve.Hit) int {
			switch {
			case x.Score > y.Score:
				return -1
			case y.Score > x.Score:
				return 1
			}
			return 0
		})
		if !slices.Equal(got, want) || cap(got) != len(got) {
			t.Fatalf("round %d: %v (room %d), want %v", round, got, cap(got), want)
		}
	}
}
