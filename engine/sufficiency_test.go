package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

func TestScoreTest(t *testing.T) {
	// res is n results: the best with coverage cov and cosine cos, the
	// others with half coverage.
	res := func(cov, cos float64, n int) []engine.Result {
		out := make([]engine.Result, n)
		for i := range out {
			out[i] = engine.Result{Record: engine.Record{ID: uint64(10 * (i + 1))}, Coverage: 0.5}
		}
		if n > 0 {
			out[0].Coverage, out[0].VectorScore = cov, cos
		}
		return out
	}
	ambiguous := res(1, 0.9, 3) // records 10 and 30 both hold the query
	ambiguous[2].Coverage = 1
	successor := res(1, 0.9, 3) // record 30 holds it through record 10, the turn before it
	successor[2].Coverage, successor[2].Record.Prev = 1, 10
	tests := []struct {
		name string
		test engine.ScoreTest
		q    string // the query; "" means "peanut allergy"
		k    int
		res  []engine.Result
		want bool
	}{
		{"full coverage, default", engine.ScoreTest{}, "", 2, res(1, 0.1, 2), true},
		{"partial coverage, default", engine.ScoreTest{}, "", 2, res(0.9, 0.9, 2), false},
		{"too few results", engine.ScoreTest{}, "", 3, res(1, 1, 2), false},
		{"no results", engine.ScoreTest{}, "", 1, nil, false},
		{"lower coverage bar", engine.ScoreTest{MinCoverage: 0.8}, "", 1, res(0.85, 0, 1), true},
		{"cosine required and met", engine.ScoreTest{MinCosine: 0.5}, "", 1, res(1, 0.6, 1), true},
		{"cosine required and missed", engine.ScoreTest{MinCosine: 0.5}, "", 1, res(1, 0.4, 1), false},
		{"two full matches: ambiguous", engine.ScoreTest{}, "", 3, ambiguous, false},
		{"two full matches allowed", engine.ScoreTest{MaxMatches: 2}, "", 3, ambiguous, true},
		{"any number of matches", engine.ScoreTest{MaxMatches: -1}, "", 3, ambiguous, true},
		{"a match and its successor count once", engine.ScoreTest{}, "", 3, successor, true},
		{"one occasion: a full match answers it", engine.ScoreTest{}, "What did Melanie paint recently?", 2, res(1, 0.9, 2), true},
		{"a set: a full match is one answer of several", engine.ScoreTest{}, "What books has Melanie read?", 2, res(1, 0.9, 2), false},
		{"a count of occasions is a set", engine.ScoreTest{}, "How many times has Joanna found new hiking trails?", 2, res(1, 0.9, 2), false},
		{"one word besides a name: a word match", engine.ScoreTest{}, "What did Caroline research?", 2, res(1, 0.9, 2), false},
		{"one word alone", engine.ScoreTest{}, "allergy", 2, res(1, 0.9, 2), false},
		{"two words, the first capitalised", engine.ScoreTest{}, "Peanut allergy", 2, res(1, 0.9, 2), true},
		{"one word besides a name, function words aside", engine.ScoreTest{}, "Where did Caroline move from?", 2, res(1, 0.9, 2), false},
		{"two words besides names", engine.ScoreTest{}, "Where did Caroline move from Sweden to Boston?", 2, res(1, 0.9, 2), false},
		{"two words besides a name", engine.ScoreTest{}, "Why did Caroline research adoption?", 2, res(1, 0.9, 2), true},
		{"a set, any number of matches", engine.ScoreTest{MaxMatches: -1}, "What damages have happened to John's car?", 3, ambiguous, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			if q == "" {
				q = "peanut allergy"
			}
			got, err := tt.test.Sufficient(context.Background(), &engine.Query{Text: q, K: tt.k}, 1, tt.res)
			if err != nil || got != tt.want {
				t.Errorf("Sufficient = %v, %v; want %v, nil", got, err, tt.want)
			}
		})
	}
}

// TestWalkStopsAtSufficientTier checks the walk end to end with tiers
// smaller than the store: a query the recent records answer is served by
// Tier 1; one whose terms only an old (archived) record holds goes to the
// archive and finds it.
func TestWalkStopsAtSufficientTier(t *testing.T) {
	e := openSmallTiers(t, &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}, 4, 4)
	var ins []engine.Input
	for i := range 40 {
		ins = append(ins, engine.Input{Session: fmt.Sprint("s", i/4), Text: fmt.Sprintf("note %d about topic%d", i, i)})
	}
	ids := remember(t, e, ins...)
	old := -1 // a record of an old session that is in the archive only
	for i := range 36 {
		if r, err := e.Get(ids[i]); err == nil && r.Header.Tier == engine.TierArchive {
			old = i
			break
		}
	}
	if old < 0 {
		t.Fatal("no archived record: the tiers hold everything")
	}
	tests := []struct {
		query    string
		want     uint64
		wantTier uint8
	}{
		{"note about topic39", ids[39], engine.TierCache},
		{fmt.Sprint("topic", old), ids[old], engine.TierArchive},
	}
	for _, tt := range tests {
		res, err := e.Recall(context.Background(), engine.Query{Text: tt.query, K: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 || res[0].Record.ID != tt.want || res[0].Tier != tt.wantTier {
			t.Errorf("Recall(%q) = %+v, want record %d from tier %d", tt.query, res, tt.want, tt.wantTier)
		}
	}
	if s := e.TierStats(); s.Served[1] != 1 || s.Served[3] != 1 {
		t.Errorf("served per tier = %v, want one query each from tiers 1 and 3", s.Served)
	}
}

func TestTierStatsPersist(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	e := openAt(t, dir, clock)
	remember(t, e, facts...)
	recallIDs(t, e, engine.Query{Text: "peanut allergy", K: 1})
	recallIDs(t, e, engine.Query{Text: "Kubernetes", K: 1})
	want := e.TierStats()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openAt(t, dir, clock)
	defer e.Close()
	if got := e.TierStats(); got.Queries != 2 || got != want {
		t.Errorf("TierStats after reopen = %+v, want %+v (2 queries)", got, want)
	}
}

// TestAccessedHeadersVisibleEverywhere checks that an access is seen by
// Get and Scan in the same process, and by a flat-mode process after
// reopening, although active records are not rewritten on access.
func TestAccessedHeadersVisibleEverywhere(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	e := openAt(t, dir, clock)
	ids := remember(t, e, facts...)
	clock.t = clock.t.Add(time.Hour)
	if got := recallIDs(t, e, engine.Query{Text: "peanut allergy", K: 1}); len(got) != 1 || got[0] != ids[3] {
		t.Fatalf("Recall = %v, want [%d]", got, ids[3])
	}
	check := func(how string, h engine.Header) {
		t.Helper()
		if h.N != 1 || !h.LastUsed.Equal(clock.t) || h.Tier == engine.TierArchive {
			t.Errorf("%s: header %+v, want n=1, t_last=%v, an active tier", how, h, clock.t)
		}
	}
	r, _ := e.Get(ids[3])
	check("Get", r.Header)
	e.Scan(func(r *engine.Record) error {
		if r.ID == ids[3] {
			check("Scan", r.Header)
		}
		return nil
	})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	o := testOptions(clock)
	o.Mode = engine.ModeFlat
	e, err := engine.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r, _ = e.Get(ids[3])
	check("Get after reopen in flat mode", r.Header)
}

// TestDemotionKeepsHeader checks that a record pushed out of the active
// tiers keeps its recall count in the archive.
func TestDemotionKeepsHeader(t *testing.T) {
	clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	e := openSmallTiers(t, clock, 2, 2)
	first := remember(t, e, engine.Input{Session: "a", Text: "the quince jam recipe"})[0]
	if got := recallIDs(t, e, engine.Query{Text: "quince jam", K: 1}); len(got) != 1 || got[0] != first {
		t.Fatalf("Recall = %v, want [%d]", got, first)
	}
	for i := range 20 {
		clock.t = clock.t.Add(30 * 24 * time.Hour)
		remember(t, e, engine.Input{Session: fmt.Sprint("s", i), Text: fmt.Sprint("later note ", i)})
	}
	r, err := e.Get(first)
	if err != nil {
		t.Fatal(err)
	}
	if r.Header.Tier != engine.TierArchive || r.Header.N != 1 {
		t.Errorf("header after demotion = %+v, want tier 3 with n=1", r.Header)
	}
}

// downEmbedder embeds until down is set, then reports its server gone.
type downEmbedder struct {
	engine.Embedder
	down bool
}

func (d *downEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if d.down {
		return nil, fmt.Errorf("%w: connection refused", engine.ErrModelUnavailable)
	}
	return d.Embedder.Embed(ctx, texts)
}

func TestRecallWithEmbedderDownAnswersLexically(t *testing.T) {
	for _, mode := range []engine.Mode{engine.ModeTiered, engine.ModeFlat} {
		t.Run(string(mode), func(t *testing.T) {
			o := testOptions(&fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)})
			emb := &downEmbedder{Embedder: o.Embedder}
			o.Embedder, o.Mode = emb, mode
			e, err := engine.Open(t.TempDir(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			ids := remember(t, e, facts...)
			emb.down = true
			if got := recallIDs(t, e, engine.Query{Text: "peanut allergy", K: 1}); len(got) != 1 || got[0] != ids[3] {
				t.Errorf("Recall with the embedder down = %v, want [%d]", got, ids[3])
			}
		})
	}
}

func TestNoAccessThenAccess(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	ids := remember(t, e, facts...)
	res, err := e.Recall(context.Background(), engine.Query{Text: "peanut allergy", K: 3, NoAccess: true})
	if err != nil || len(res) == 0 {
		t.Fatalf("Recall = %v, %v", res, err)
	}
	n := func(id uint64) uint32 {
		r, err := e.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		return r.Header.N
	}
	for _, r := range res {
		if got := n(r.Record.ID); got != 0 {
			t.Errorf("record %d after a NoAccess recall: n = %d, want 0", r.Record.ID, got)
		}
	}
	if s := e.TierStats(); s.Queries != 1 {
		t.Errorf("queries counted = %d, want 1", s.Queries)
	}
	if err := e.Access(ids[3], 999); err != nil {
		t.Fatalf("Access: %v", err)
	}
	if got := n(ids[3]); got != 1 {
		t.Errorf("record %d after Access: n = %d, want 1", ids[3], got)
	}
	if got := n(ids[0]); got != 0 {
		t.Errorf("record %d not accessed: n = %d, want 0", ids[0], got)
	}
}

// countingTest is ScoreTest counting the tiers it is asked about; with
// bound it also tells the walk the coverage it needs (CoverageBound).
type countingTest struct {
	engine.ScoreTest
	asked map[uint8]int
}

func (c *countingTest) Sufficient(ctx context.Context, q *engine.Query, tier uint8, res []engine.Result) (bool, error) {
	c.asked[tier]++
	return c.ScoreTest.Sufficient(ctx, q, tier, res)
}

// unbounded hides ScoreTest's NeedsCoverage: the walk ranks every tier.
type unbounded struct{ c *countingTest }

func (u unbounded) Sufficient(ctx context.Context, q *engine.Query, tier uint8, res []engine.Result) (bool, error) {
	return u.c.Sufficient(ctx, q, tier, res)
}

// TestWalkSkipsTierThatCannotSuffice checks that a tier none of whose
// lexical hits holds the whole query is not ranked (the score test is
// not asked about it), and that the walk returns what it returned when
// every tier was ranked.
func TestWalkSkipsTierThatCannotSuffice(t *testing.T) {
	var ins []engine.Input
	for i := range 40 {
		ins = append(ins, engine.Input{Session: fmt.Sprint("s", i/4), Text: fmt.Sprintf("note %d about topic%d", i, i)})
	}
	old := -1 // a record that only the archive holds
	open := func(suff func(*countingTest) engine.Sufficiency) (*engine.Engine, *countingTest) {
		o := testOptions(&fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)})
		o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = 4, 4, 1, -1
		c := &countingTest{asked: map[uint8]int{}}
		o.Sufficiency = suff(c)
		e, err := engine.Open(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		ids := remember(t, e, ins...)
		if old < 0 {
			for i := range ids {
				if r, err := e.Get(ids[i]); err == nil && r.Header.Tier == engine.TierArchive {
					old = i
					break
				}
			}
		}
		return e, c
	}
	bounded, cb := open(func(c *countingTest) engine.Sufficiency { return c })
	ranked, cr := open(func(c *countingTest) engine.Sufficiency { return unbounded{c} })
	if old < 0 {
		t.Fatal("no archived record: the tiers hold everything")
	}
	tests := []struct {
		query          string
		asked1, asked2 int  // times the bounded walk asks about Tiers 1 and 2
		served1        bool // served by Tier 1
		unsearched     bool // the bounded walk leaves a tier unsearched
	}{
		{"note about topic39", 1, 0, true, false},     // Tier 1 holds it whole
		{fmt.Sprint("topic", old), 0, 0, false, true}, // one topic word, not judged: the archive answers
		{"note about topic37", 1, 0, true, false},
		// Tier 1 is searched; Tier 2, whose index is not filled yet, is
		// not: the archive's index has no record of Tiers 1 and 2
		// holding every word.
		{"topic38 and nothing else", 0, 0, false, true},
		// A set question: Tier 1 holds its words, but the test does not
		// judge it, and no tier is searched for it.
		{"What notes are about topic39?", 0, 0, false, true},
		// The same, decomposed by name: its parts are not ranked either.
		{"What notes do Jon and Gina have about topic39?", 0, 0, false, true},
	}
	for _, tt := range tests {
		before, before2 := cb.asked[1], cb.asked[2]
		scoredB, scoredR := bounded.TierStats().Scored, ranked.TierStats().Scored
		got, err := bounded.Recall(context.Background(), engine.Query{Text: tt.query, K: 2})
		if err != nil {
			t.Fatal(err)
		}
		want, err := ranked.Recall(context.Background(), engine.Query{Text: tt.query, K: 2})
		if err != nil {
			t.Fatal(err)
		}
		if n := cb.asked[1] - before; n != tt.asked1 {
			t.Errorf("%q: Tier 1 asked %d times, want %d", tt.query, n, tt.asked1)
		}
		if n := cb.asked[2] - before2; n != tt.asked2 {
			t.Errorf("%q: Tier 2 asked %d times, want %d", tt.query, n, tt.asked2)
		}
		if fmt.Sprint(resultsOf(got)) != fmt.Sprint(resultsOf(want)) {
			t.Errorf("%q: bounded walk = %v, ranking every tier = %v", tt.query, resultsOf(got), resultsOf(want))
		}
		// The tiers' records count as scored when the walk scans them.
		db, dr := bounded.TierStats().Scored-scoredB, ranked.TierStats().Scored-scoredR
		if unsearched := db < dr; unsearched != tt.unsearched {
			t.Errorf("%q: %d scored against %d ranking every tier: tiers left unsearched = %v, want %v", tt.query, db, dr, unsearched, tt.unsearched)
		}
		if served := len(got) > 0 && got[0].Tier == engine.TierCache; served != tt.served1 {
			t.Errorf("%q: served by Tier 1 = %v, want %v", tt.query, served, tt.served1)
		}
	}
	if cr.asked[1] != len(tests) || cr.asked[2] != 4 {
		t.Errorf("the unbounded walk asked about Tiers 1 and 2 %d and %d times, want %d and 4", cr.asked[1], cr.asked[2], len(tests))
	}
	if b, r := bounded.TierStats(), ranked.TierStats(); fmt.Sprint(b.Served) != fmt.Sprint(r.Served) {
		t.Errorf("served per tier: bounded %v, ranking every tier %v", b.Served, r.Served)
	}
}

// resultsOf is what a walk returned: ids, tiers and scores.
func resultsOf(res []engine.Result) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = fmt.Sprintf("%d@%d:%.6f", r.Record.ID, r.Tier, r.Score)
	}
	return out
}

// TestNeedsCoverageFollowsText checks that ScoreTest's bound answers for
// the query's current text when one Query is asked again after its text
// changed (the walk keeps the answer for the text it was computed for).
func TestNeedsCoverageFollowsText(t *testing.T) {
	var s engine.ScoreTest
	q := &engine.Query{}
	for _, tc := range []struct {
		text  string
		judge bool // the score test judges it: a coverage of about 1
	}{
		{"when did Alice paint the fence in Lisbon", true},
		{"What books has Melanie read?", false}, // a set question
		{"when did Alice paint the fence in Lisbon", true},
		{"kayak", false}, // one topic word
		{"kayak", false},
		{"the violin lesson on Tuesday", true},
	} {
		q.Text = tc.text
		got := s.NeedsCoverage(q, 1)
		if judged := got <= 1; judged != tc.judge {
			t.Errorf("NeedsCoverage(%q) = %v, judged %t, want %t", tc.text, got, judged, tc.judge)
		}
	}
}
