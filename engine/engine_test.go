package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/testembed"
)

var facts = []engine.Input{
	{Scope: "alice", Session: "s1", Role: "user", Text: "I adopted a golden retriever named Biscuit last spring."},
	{Scope: "alice", Session: "s1", Role: "assistant", Text: "That is lovely. How is Biscuit settling in?"},
	{Scope: "alice", Session: "s2", Role: "user", Text: "My sister lives in Lisbon and works as an architect."},
	{Scope: "bob", Session: "s1", Role: "user", Text: "I am allergic to peanuts, never suggest peanut recipes."},
	{Scope: "bob", Session: "s2", Role: "user", Text: "The deployment pipeline runs on Kubernetes in Frankfurt."},
}

func TestRememberGetRoundTrip(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	long := strings.Repeat("a long memory about compilers and parsers ", 100)
	in := []engine.Input{
		{Scope: "u", Session: "s", Role: "user", Text: "short one", Sources: []string{"D1:1"}, Time: time.Date(2023, 1, 2, 3, 4, 5, 0, time.UTC)},
		{Scope: "u", Session: "s", Role: "user", Text: long},
	}
	ids := remember(t, e, in...)
	for i, id := range ids {
		got, err := e.Get(id)
		if err != nil {
			t.Fatalf("Get(%d): %v", id, err)
		}
		if got.Text != in[i].Text || got.Scope != in[i].Scope || got.Role != in[i].Role {
			t.Errorf("Get(%d) = %+v, want input %d", id, got, i)
		}
		if got.Header.Tier != engine.TierCache || got.Header.I0 != engine.DefaultImportance || got.Header.N != 0 || got.Header.P <= 0 {
			t.Errorf("Get(%d).Header = %+v, want a fresh Tier-1 header (recent session) with P > 0", id, got.Header)
		}
	}
	first, _ := e.Get(ids[0])
	if !first.Time.Equal(in[0].Time) || len(first.Sources) != 1 || first.Sources[0] != "D1:1" {
		t.Errorf("first record time/sources = %v %v, want %v [D1:1]", first.Time, first.Sources, in[0].Time)
	}
	second, _ := e.Get(ids[1])
	if second.Prev != ids[0] {
		t.Errorf("second.Prev = %d, want %d (same session)", second.Prev, ids[0])
	}
	if !second.Time.Equal(time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("zero input time became %v, want the clock's time", second.Time)
	}
}

func TestRememberRejectsBadInputAtomically(t *testing.T) {
	tests := []struct {
		name string
		in   engine.Input
		want error
	}{
		{"empty", engine.Input{Text: "   "}, engine.ErrEmptyText},
		{"invalid utf-8", engine.Input{Text: "bad \xff text"}, engine.ErrInvalidUTF8},
		{"oversize", engine.Input{Text: strings.Repeat("x", engine.DefaultMaxTextBytes+1)}, engine.ErrTooLarge},
		{"bad label", engine.Input{Text: "ok", Scope: "a\x00b"}, engine.ErrInvalidInput},
		{"long label", engine.Input{Text: "ok", Session: strings.Repeat("s", 300)}, engine.ErrTooLarge},
		{"bad time", engine.Input{Text: "ok", Time: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}, engine.ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := openTest(t, t.TempDir())
			_, err := e.Remember(context.Background(), engine.Input{Text: "a valid record first"}, tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Remember err = %v, want %v", err, tt.want)
			}
			st, err := e.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if st.Records != 0 || st.LogSeq != 0 {
				t.Errorf("after rejected batch: %d records, log seq %d; want 0, 0", st.Records, st.LogSeq)
			}
		})
	}
}

func TestRecallHybridAndFilters(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	ids := remember(t, e, facts...)
	tests := []struct {
		name string
		q    engine.Query
		want uint64
		not  []uint64
	}{
		{"lexical", engine.Query{Text: "peanut allergy", K: 1}, ids[3], nil},
		{"dog", engine.Query{Text: "golden retriever adopted", K: 1}, ids[0], nil},
		{"scope filter", engine.Query{Text: "Biscuit peanuts Kubernetes", K: 5, Scope: "bob"}, ids[3], ids[:3]},
		{"session filter", engine.Query{Text: "sister Lisbon Biscuit", K: 5, Scope: "alice", Session: "s2"}, ids[2], ids[:2]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := recallIDs(t, e, tt.q)
			if len(got) == 0 || !contains(got, tt.want) {
				t.Fatalf("Recall(%q) = %v, want it to contain %d", tt.q.Text, got, tt.want)
			}
			if tt.q.K == 1 && got[0] != tt.want {
				t.Errorf("Recall(%q) top = %d, want %d", tt.q.Text, got[0], tt.want)
			}
			for _, id := range tt.not {
				if contains(got, id) {
					t.Errorf("Recall(%q) = %v returned filtered-out record %d", tt.q.Text, got, id)
				}
			}
		})
	}
}

func TestRecallTimeRange(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	day := func(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }
	var ins []engine.Input
	for d := 1; d <= 5; d++ {
		ins = append(ins, engine.Input{Session: fmt.Sprint(d), Time: day(d), Text: fmt.Sprintf("weekly standup notes number %d", d)})
	}
	ids := remember(t, e, ins...)
	got := recallIDs(t, e, engine.Query{Text: "standup notes", K: 10, From: day(2), To: day(4)})
	if len(got) != 2 || !contains(got, ids[1]) || !contains(got, ids[2]) {
		t.Errorf("Recall in [day2, day4) = %v, want exactly %v", got, ids[1:3])
	}
}

func TestRecallRejectsBadQuery(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	for _, q := range []engine.Query{{Text: ""}, {Text: "\xff"}, {Text: "x", K: -1}, {Text: "x", K: 5000},
		{Text: "x", From: time.Unix(10, 0), To: time.Unix(5, 0)}} {
		if _, err := e.Recall(context.Background(), q); !errors.Is(err, engine.ErrInvalidQuery) {
			t.Errorf("Recall(%+v) err = %v, want ErrInvalidQuery", q, err)
		}
	}
}

func TestForgetRemovesEverywhere(t *testing.T) {
	dir := t.TempDir()
	e, _ := openTest(t, dir)
	ids := remember(t, e, facts...)
	if err := e.Forget(context.Background(), ids[3]); err != nil {
		t.Fatalf("Forget: %v", err)
	}
	if _, err := e.Get(ids[3]); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Get after Forget err = %v, want ErrNotFound", err)
	}
	if got := recallIDs(t, e, engine.Query{Text: "peanut allergy", K: 10}); contains(got, ids[3]) {
		t.Errorf("Recall after Forget = %v still has %d", got, ids[3])
	}
	if err := e.OpenVectorIndex(); err != nil {
		t.Fatal(err)
	}
	st, _ := e.Stats()
	if st.Records != 4 || st.VectorLen != 4 {
		t.Errorf("Stats after Forget: %d records, %d vectors; want 4, 4", st.Records, st.VectorLen)
	}
	if err := e.Forget(context.Background(), ids[0], 999); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Forget(unknown) err = %v, want ErrNotFound", err)
	}
	if _, err := e.Get(ids[0]); err != nil {
		t.Errorf("failed Forget removed record %d: %v", ids[0], err)
	}
}

func TestForgetReindexesSuccessorContext(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	ids := remember(t, e,
		engine.Input{Session: "s", Text: "my secret password hint is zanzibar"},
		engine.Input{Session: "s", Text: "noted, I will keep it safe"},
	)
	if got := recallIDs(t, e, engine.Query{Text: "zanzibar", K: 5}); !contains(got, ids[1]) {
		t.Fatalf("before Forget, successor %d should match through its context: %v", ids[1], got)
	}
	if err := e.Forget(context.Background(), ids[0]); err != nil {
		t.Fatal(err)
	}
	res, err := e.Recall(context.Background(), engine.Query{Text: "zanzibar", K: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.TextScore > 0 {
			t.Errorf("after Forget, %d still matches the forgotten text lexically (score %v)", r.Record.ID, r.TextScore)
		}
	}
	if r, _ := e.Get(ids[1]); r.Prev != 0 {
		t.Errorf("successor Prev = %d after its predecessor was forgotten, want 0", r.Prev)
	}
}

func TestReopenKeepsRecordsAndRefusesOtherEmbedder(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Now()}
	e, err := engine.Open(dir, testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	ids := remember(t, e, facts...)
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	e, err = engine.Open(dir, testOptions(clock))
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if got := recallIDs(t, e, engine.Query{Text: "peanut allergy", K: 1}); len(got) != 1 || got[0] != ids[3] {
		t.Errorf("Recall after reopen = %v, want [%d]", got, ids[3])
	}
	e.Close()

	other := testOptions(clock)
	other.Embedder = testembed.Hash{ID: "test:other/64", Size: 64}
	if _, err := engine.Open(dir, other); !errors.Is(err, engine.ErrEmbedderMismatch) {
		t.Errorf("Open with another embedder err = %v, want ErrEmbedderMismatch", err)
	}
	ctx := testOptions(clock)
	ctx.IndexContext = -1
	if _, err := engine.Open(dir, ctx); !errors.Is(err, engine.ErrConfigMismatch) {
		t.Errorf("Open with other index context err = %v, want ErrConfigMismatch", err)
	}
}

func TestIndexesRebuiltWhenLost(t *testing.T) {
	for _, lost := range []string{engine.VectorDir, engine.TextDir} {
		t.Run(lost, func(t *testing.T) {
			dir := t.TempDir()
			clock := &fakeClock{t: time.Now()}
			e, err := engine.Open(dir, testOptions(clock))
			if err != nil {
				t.Fatal(err)
			}
			ids := remember(t, e, facts...)
			e.Close()
			if err := os.RemoveAll(filepath.Join(dir, lost)); err != nil {
				t.Fatal(err)
			}
			e, err = engine.Open(dir, testOptions(clock))
			if err != nil {
				t.Fatalf("reopen without %s: %v", lost, err)
			}
			defer e.Close()
			if err := e.OpenVectorIndex(); err != nil {
				t.Fatal(err)
			}
			st, _ := e.Stats()
			if st.VectorLen != len(facts) || st.TextWatermark != st.LogSeq || st.VectorWatermark != st.LogSeq {
				t.Errorf("after rebuild: %+v, want %d vectors and both watermarks at %d", st, len(facts), st.LogSeq)
			}
			if got := recallIDs(t, e, engine.Query{Text: "Kubernetes Frankfurt", K: 1}); len(got) != 1 || got[0] != ids[4] {
				t.Errorf("Recall after rebuild = %v, want [%d]", got, ids[4])
			}
		})
	}
}

func TestLockedStore(t *testing.T) {
	dir := t.TempDir()
	openTest(t, dir)
	o := testOptions(&fakeClock{t: time.Now()})
	o.OpenTimeout = 50 * time.Millisecond
	if _, err := engine.Open(dir, o); !errors.Is(err, engine.ErrLocked) {
		t.Errorf("second Open err = %v, want ErrLocked", err)
	}
}

func TestClosed(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	e.Close()
	if _, err := e.Remember(context.Background(), facts[0]); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Remember after Close err = %v, want ErrClosed", err)
	}
	if _, err := e.Recall(context.Background(), engine.Query{Text: "x"}); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Recall after Close err = %v, want ErrClosed", err)
	}
}

func TestConcurrentRememberRecall(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if _, err := e.Remember(context.Background(), engine.Input{Scope: fmt.Sprint(w), Text: fmt.Sprintf("worker %d note %d about gardening", w, i)}); err != nil {
					t.Error(err)
					return
				}
				if _, err := e.Recall(context.Background(), engine.Query{Text: "gardening", K: 3}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st, _ := e.Stats()
	if st.Records != 80 {
		t.Errorf("records = %d, want 80", st.Records)
	}
}

func TestCheckpointTrimsLog(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(&fakeClock{t: time.Now()})
	o.CheckpointLog = 10
	e, err := engine.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for i := 0; i < 200; i++ {
		remember(t, e, engine.Input{Text: fmt.Sprintf("record number %d", i)})
	}
	st, _ := e.Stats()
	if st.LogPending >= 200 {
		t.Errorf("log keeps %d entries after 200 writes with checkpoints every 10", st.LogPending)
	}
}

func TestModesAgreeOnSmallStore(t *testing.T) {
	for _, mode := range []engine.Mode{engine.ModeFlat, engine.ModeTiered} {
		t.Run(string(mode), func(t *testing.T) {
			o := testOptions(&fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)})
			o.Mode = mode
			e, err := engine.Open(t.TempDir(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			ids := remember(t, e, facts...)
			if got := recallIDs(t, e, engine.Query{Text: "peanut allergy", K: 1}); len(got) != 1 || got[0] != ids[3] {
				t.Errorf("Recall = %v, want [%d]", got, ids[3])
			}
			if got := recallIDs(t, e, engine.Query{Text: "Biscuit peanuts Kubernetes", K: 5, Scope: "bob"}); contains(got, ids[0]) {
				t.Errorf("scope filter leaked: %v", got)
			}
			ts := e.TierStats()
			if mode == engine.ModeFlat && ts.Queries != 0 {
				t.Errorf("flat mode counted tier queries: %+v", ts)
			}
			if mode == engine.ModeTiered && (ts.Queries != 2 || ts.Tier1+ts.Tier2 != len(facts)) {
				t.Errorf("tiered stats = %+v, want 2 queries and all %d records active", ts, len(facts))
			}
		})
	}
}

func TestTiersSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	e, err := engine.Open(dir, testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	ids := remember(t, e, facts...)
	recallIDs(t, e, engine.Query{Text: "peanut allergy", K: 1})
	before := e.TierStats()
	hdr, _ := e.Get(ids[3])
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = engine.Open(dir, testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	after := e.TierStats()
	if after.Tier1 != before.Tier1 || after.Tier2 != before.Tier2 {
		t.Errorf("tiers after reopen = %d/%d, want %d/%d", after.Tier1, after.Tier2, before.Tier1, before.Tier2)
	}
	got, _ := e.Get(ids[3])
	if got.Header.N != 1 || got.Header != hdr.Header {
		t.Errorf("accessed header after reopen = %+v, want n=1 and %+v", got.Header, hdr.Header)
	}
}

type fixedImportance float64

func (f fixedImportance) Importance(string) float64 { return float64(f) }

func TestForgetRemovesTextFromPersona(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(&fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)})
	o.Importance = fixedImportance(9) // high enough to be quoted in the profile
	e, err := engine.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	ids := remember(t, e, engine.Input{Text: "my locker code is 90210, keep it secret"}, engine.Input{Text: "I live in Porto"})
	quoted := func() bool {
		for _, st := range e.Persona().Profile().Statements {
			if strings.Contains(st.Text, "90210") {
				return true
			}
		}
		return false
	}
	if !quoted() {
		t.Fatal("the profile should quote the high-importance record before Forget")
	}
	if err := e.Forget(context.Background(), ids[0]); err != nil {
		t.Fatal(err)
	}
	if quoted() {
		t.Error("the profile still quotes the forgotten record")
	}
	e.Close()
	e, err = engine.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if quoted() {
		t.Error("after reopen, the stored profile still quotes the forgotten record")
	}
}
