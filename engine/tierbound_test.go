package engine_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
)

// holdingText is a tier index that can tell which documents hold a
// query's terms (engine.TermHolder, through fts.Memory) and counts the
// documents applied to it.
type holdingText struct {
	*fts.Memory
	mu       sync.Mutex
	docs     int
	searches int
}

func (h *holdingText) Search(ctx context.Context, q string, k int, f engine.TextFilter) ([]engine.TextHit, error) {
	h.mu.Lock()
	h.searches++
	h.mu.Unlock()
	return h.Memory.Search(ctx, q, k, f)
}

func (h *holdingText) searched() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.searches
}

func (h *holdingText) Apply(docs []engine.TextDoc, dels []uint64, wm uint64) error {
	h.mu.Lock()
	h.docs += len(docs)
	h.mu.Unlock()
	return h.Memory.Apply(docs, dels, wm)
}

func (h *holdingText) applied() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.docs
}

// topicTiers is a small tiered store, built once per test: five topics
// over six sessions, each record with a code of its own, in a Tier 1 of 4
// and a Tier 2 of 8. Each case opens a copy.
type topicTiers struct {
	clock  *fakeClock
	built  string
	ins    []engine.Input
	ids    []uint64
	tierOf map[uint64]uint8
}

var tierTopics = []string{"kayak", "violin", "garden", "pottery", "chess"}

func newTopicTiers(t *testing.T) *topicTiers {
	t.Helper()
	s := &topicTiers{clock: &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}, built: t.TempDir()}
	for se := range 6 {
		for i, w := range tierTopics {
			n := se*len(tierTopics) + i
			s.ins = append(s.ins, engine.Input{Scope: "a", Session: fmt.Sprintf("s%d", se), Role: "user",
				Text: fmt.Sprintf("session %d: we talked about the %s and the %s, code w%c%c", se, w, w, 'a'+n/26, 'a'+n%26),
				Time: s.clock.t.Add(time.Duration(n) * time.Minute)})
		}
	}
	e, err := engine.Open(s.built, s.options())
	if err != nil {
		t.Fatal(err)
	}
	s.ids = remember(t, e, s.ins...)
	s.tierOf = tiersOf(t, e, s.ids)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *topicTiers) options() *engine.Options {
	o := testOptions(s.clock)
	o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = 4, 8, 1, -1
	return o
}

// question is a question of a topic and one record's code, held whole by
// the first record in tier and by no other.
func (s *topicTiers) question(t *testing.T, tier uint8) string {
	t.Helper()
	for i, id := range s.ids {
		if s.tierOf[id] == tier {
			f := strings.Fields(s.ins[i].Text)
			return "the " + tierTopics[i%len(tierTopics)] + " code " + f[len(f)-1]
		}
	}
	t.Fatalf("no record in tier %d: %v", tier, s.tierOf)
	return ""
}

// open opens a copy of the store whose tier indexes are holdingTexts,
// listed in *ix as they are made (Tier 1's, then Tier 2's). With asks
// false they hide engine.TermHolder: indexes the engine cannot ask.
func (s *topicTiers) open(t *testing.T, asks bool, ix *[]*holdingText) *engine.Engine {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(s.built)); err != nil {
		t.Fatal(err)
	}
	o := s.options()
	o.NewTierTextIndex = func() (engine.TextIndex, error) {
		m, err := fts.NewMemory("")
		h := &holdingText{Memory: m}
		*ix = append(*ix, h)
		if !asks {
			return struct{ engine.TextIndex }{h}, err // hides TermHolder
		}
		return h, err
	}
	e, err := engine.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestTier2UnfilledWhenNoTierRecordHoldsQuery checks that the walk does
// not fill Tier 2's lexical index for a question no record of Tiers 1
// and 2 holds every term of (the archive's index says so), and fills it
// for one a Tier 2 record holds; and that both rank exactly as a walk
// that fills it every time (a tier index the engine cannot ask).
func TestTier2UnfilledWhenNoTierRecordHoldsQuery(t *testing.T) {
	s := newTopicTiers(t)
	tests := []struct {
		name, q string
		fill    bool // Tier 2's index is filled by the walk
	}{
		{"no tier record holds it", s.question(t, engine.TierArchive), false},
		{"a Tier 2 record holds it", s.question(t, engine.TierBuffer), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got [2][]engine.Result
			var stats [2]engine.TierStats
			for v, asks := range []bool{false, true} {
				var ix []*holdingText
				e := s.open(t, asks, &ix)
				res, err := e.Recall(context.Background(), engine.Query{Text: tc.q, Scope: "a", NoAccess: true})
				if err != nil {
					t.Fatal(err)
				}
				filled := ix[len(ix)-1].applied() > 0 // the last one made is Tier 2's
				stats[v] = e.TierStats()
				if err := e.Close(); err != nil {
					t.Fatal(err)
				}
				if asks && filled != tc.fill {
					t.Errorf("%q: Tier 2's index filled %t, want %t", tc.q, filled, tc.fill)
				}
				if !asks && !filled {
					t.Errorf("%q: a tier index the engine cannot ask was not filled", tc.q)
				}
				got[v] = res
			}
			if len(got[0]) == 0 || !reflect.DeepEqual(got[0], got[1]) {
				t.Errorf("%q: results differ:\n filled every time %v\n asking the archive %v", tc.q, brief(got[0]), brief(got[1]))
			}
			if stats[0].Served != stats[1].Served {
				t.Errorf("%q: served %v filling every time, %v asking the archive", tc.q, stats[0].Served, stats[1].Served)
			}
		})
	}
}

// brief lists results as id/tier/score.
func brief(res []engine.Result) []string {
	return slices.Collect(func(yield func(string) bool) {
		for _, r := range res {
			if !yield(fmt.Sprintf("%d/t%d/%.4f", r.Record.ID, r.Tier, r.Score)) {
				return
			}
		}
	})
}

// TestTierUnsearchedWhenItsIndexLacksTerms checks that, once Tier 2's
// lexical index is filled, the walk does not search a tier whose own
// index has no document holding every term of the question (Tier 1's, or
// Tier 2's, which holds both tiers), and that it returns and counts what
// a walk searching every tier returns (tier indexes the engine cannot
// ask).
func TestTierUnsearchedWhenItsIndexLacksTerms(t *testing.T) {
	s := newTopicTiers(t)
	fill := s.question(t, engine.TierBuffer)
	tests := []struct {
		name, q          string
		search1, search2 bool // the walk that asks searches Tier 1's, Tier 2's index
	}{
		{"no tier record holds it", s.question(t, engine.TierArchive), false, false},
		{"a Tier 2 record holds it", fill, false, true},
		// Tier 1 alone holds fewer than K results: it is ranked, not
		// sufficient, and Tier 2, which holds its records, is ranked.
		{"a Tier 1 record holds it", s.question(t, engine.TierCache), true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got [2][]engine.Result
			var stats [2]engine.TierStats
			for v, asks := range []bool{false, true} {
				var ix []*holdingText // Tier 1's, then Tier 2's
				e := s.open(t, asks, &ix)
				// A Tier 2 record holds it: Tier 2's index is filled.
				if _, err := e.Recall(context.Background(), engine.Query{Text: fill, Scope: "a", NoAccess: true}); err != nil {
					t.Fatal(err)
				}
				if ix[1].applied() == 0 {
					t.Fatalf("%q did not fill Tier 2's index", fill)
				}
				s1, s2 := ix[0].searched(), ix[1].searched()
				before := e.TierStats()
				res, err := e.Recall(context.Background(), engine.Query{Text: tc.q, Scope: "a", NoAccess: true})
				if err != nil {
					t.Fatal(err)
				}
				after := e.TierStats()
				if err := e.Close(); err != nil {
					t.Fatal(err)
				}
				for i := range after.Served {
					stats[v].Served[i] = after.Served[i] - before.Served[i]
				}
				searched1, searched2 := ix[0].searched() > s1, ix[1].searched() > s2
				want1, want2 := tc.search1, tc.search2
				if !asks {
					want1, want2 = true, true
				}
				if searched1 != want1 || searched2 != want2 {
					t.Errorf("%q, asking %t: searched Tier 1 %t, Tier 2 %t; want %t, %t", tc.q, asks, searched1, searched2, want1, want2)
				}
				got[v] = res
			}
			if len(got[0]) == 0 || !reflect.DeepEqual(got[0], got[1]) {
				t.Errorf("%q: results differ:\n searching every tier %v\n asking the tiers' indexes %v", tc.q, brief(got[0]), brief(got[1]))
			}
			if stats[0].Served != stats[1].Served {
				t.Errorf("%q: served %v searching every tier, %v asking the tiers' indexes", tc.q, stats[0].Served, stats[1].Served)
			}
		})
	}
}

// ambiguousTopic returns a topic no Tier 1 record and at least two Tier 2
// records name (in different sessions: none is the turn before another).
func (s *topicTiers) ambiguousTopic(t *testing.T) string {
	t.Helper()
	for ti, w := range tierTopics {
		var in [4]int
		for i, id := range s.ids {
			if i%len(tierTopics) == ti {
				in[s.tierOf[id]]++
			}
		}
		if in[engine.TierCache] == 0 && in[engine.TierBuffer] >= 2 {
			return w
		}
	}
	t.Fatalf("no topic in Tier 2 twice and not in Tier 1: %v", s.tierOf)
	return ""
}

// TestAmbiguousTierNotRanked checks that the walk neither searches nor
// ranks a tier in which more records than the score test's MaxMatches
// hold every term of the question, and goes on to the archive, even when
// the tier's results (one, for K 1) would show a single full match; and
// that a question the results already show ambiguous (K 3) is answered
// as by a walk that ranks the tier (a tier index the engine cannot ask).
func TestAmbiguousTierNotRanked(t *testing.T) {
	s := newTopicTiers(t)
	q := "we talked about the " + s.ambiguousTopic(t)
	tests := []struct {
		name  string
		k     int
		asks  bool
		ranks bool  // Tier 2's index is searched
		tier  uint8 // the tier that serves q
	}{
		{"asking the index, K 1", 1, true, false, engine.TierArchive},
		{"ranking the tier, K 1: the results show one match", 1, false, true, engine.TierBuffer},
		{"asking the index, K 3", 3, true, false, engine.TierArchive},
		{"ranking the tier, K 3", 3, false, true, engine.TierArchive},
	}
	results := map[int][][]engine.Result{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ix []*holdingText
			e := s.open(t, tc.asks, &ix)
			defer e.Close()
			res, err := e.Recall(context.Background(), engine.Query{Text: q, K: tc.k, Scope: "a", NoAccess: true})
			if err != nil {
				t.Fatal(err)
			}
			st := e.TierStats()
			if st.Served[tc.tier] != 1 {
				t.Errorf("%q, K %d: served %v, want tier %d", q, tc.k, st.Served, tc.tier)
			}
			if searched := ix[len(ix)-1].searched() > 0; searched != tc.ranks {
				t.Errorf("%q, K %d: Tier 2's index searched %t, want %t", q, tc.k, searched, tc.ranks)
			}
			if len(res) != tc.k {
				t.Errorf("%q, K %d: %d results", q, tc.k, len(res))
			}
			results[tc.k] = append(results[tc.k], res)
		})
	}
	if r := results[3]; len(r) == 2 && !reflect.DeepEqual(r[0], r[1]) {
		t.Errorf("%q, K 3: results differ:\n asking the index %v\n ranking the tier %v", q, brief(r[0]), brief(r[1]))
	}
}

// TestTierMatchesCounted checks how the walk counts the records of a tier
// holding every term of a question before it ranks it: a record and the
// one after it in its session count once, and records the question's
// filters leave out do not count; two records of the tier that the
// question's scope keeps make it ambiguous there (the archive serves it).
func TestTierMatchesCounted(t *testing.T) {
	clock := &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	o := testOptions(clock)
	o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = 4, 8, 1, -1
	e, err := engine.Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var ins []engine.Input
	for i := range 30 { // the archive's
		ins = append(ins, engine.Input{Scope: "a", Session: fmt.Sprint("old", i/5), Text: fmt.Sprintf("an older note %d about topic%d", i, i)})
	}
	last := []engine.Input{
		{Scope: "a", Session: "new", Text: "the yellow boat race was long"},
		{Scope: "a", Session: "new", Text: "the blue kite contest was on tuesday"},
		{Scope: "a", Session: "new", Text: "the blue kite contest again, said twice"}, // the one after it
		{Scope: "a", Session: "new", Text: "the green lantern parade was loud"},
		{Scope: "b", Session: "new", Text: "the green lantern parade in the other scope"},
		{Scope: "a", Session: "new", Text: "the yellow boat race, once more"},
	}
	for i := range ins {
		ins[i].Time = clock.t.Add(time.Duration(i) * time.Minute)
	}
	for i := range last {
		last[i].Time = clock.t.Add(time.Duration(len(ins)+i) * time.Minute)
	}
	remember(t, e, ins...)
	ids := remember(t, e, last...)
	for range 3 { // into the tiers
		if err := e.Access(ids...); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Access(ids[0]); err != nil {
		t.Fatal(err)
	}
	// Each question's records of scope a in one tier, so that the first
	// tier holding any holds them all; the other scope's in a tier too.
	tierOf := tiersOf(t, e, ids)
	for _, pair := range [][2]int{{0, 5}, {1, 2}, {3, 4}} {
		a, b := tierOf[ids[pair[0]]], tierOf[ids[pair[1]]]
		if a == engine.TierArchive || b == engine.TierArchive || pair[0] != 3 && a != b {
			t.Fatalf("%q in tier %d, %q in tier %d: the case needs them in the tiers, together", last[pair[0]].Text, a, last[pair[1]].Text, b)
		}
	}
	tests := []struct {
		name, q string
		tier    uint8 // the tier serving it; TierArchive when ambiguous
	}{
		{"a record and the one after it count once", "blue kite contest", 0},
		{"another scope's record does not count", "green lantern parade", 0},
		{"two records of the scope: ambiguous", "yellow boat race", engine.TierArchive},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := e.TierStats()
			if _, err := e.Recall(context.Background(), engine.Query{Text: tc.q, K: 1, Scope: "a", NoAccess: true}); err != nil {
				t.Fatal(err)
			}
			after := e.TierStats()
			served := uint8(0)
			for i := range after.Served {
				if after.Served[i] > before.Served[i] {
					served = uint8(i)
				}
			}
			if tc.tier == engine.TierArchive && served != engine.TierArchive || tc.tier != engine.TierArchive && served == engine.TierArchive {
				t.Errorf("%q: served by tier %d, want %s", tc.q, served, map[bool]string{true: "the archive", false: "a tier"}[tc.tier == engine.TierArchive])
			}
		})
	}
}
