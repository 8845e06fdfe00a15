package engine_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/synth"
)

// bulkBatches is a stream of synthetic batches with repeats: a batch of
// texts stored before (duplicates across batches, and one within the
// batch) and a keyed batch sent twice (idempotent replay).
func bulkBatches(n, size int) []engine.Batch {
	s := synth.New(synth.Options{Seed: 7, Records: n})
	var out []engine.Batch
	for in := s.Next(size); in != nil; in = s.Next(size) {
		out = append(out, engine.Batch{Inputs: in})
	}
	again := slices.Clone(out[0].Inputs[:5])
	again = append(again, again[0], engine.Input{Scope: "synthetic", Session: "x", Role: "user", Text: "a text seen once, in the repeat batch"})
	keyed := engine.Batch{Key: "import-1", Inputs: slices.Clone(out[1].Inputs[:3])}
	// The repeats go in the middle: the last batch stores new records.
	return slices.Insert(out, 3, engine.Batch{Inputs: again}, keyed, keyed)
}

// slowText is a text index whose updates take a while: a caller that
// does not wait for them sees the index behind the change log.
type slowText struct{ engine.TextIndex }

func (s slowText) Apply(docs []engine.TextDoc, deletes []uint64, wm uint64) error {
	time.Sleep(20 * time.Millisecond)
	return s.TextIndex.Apply(docs, deletes, wm)
}

// openMode opens a test store in mode; with slow, its text index is
// slowText.
func openMode(t *testing.T, mode engine.Mode, slow bool) *engine.Engine {
	t.Helper()
	o := testOptions(&fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)})
	o.Mode = mode
	if slow {
		open := o.OpenTextIndex
		o.OpenTextIndex = func(dir string) (engine.TextIndex, error) {
			x, err := open(dir)
			return slowText{x}, err
		}
	}
	e, err := engine.Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestRememberBatchesMatchesRememberBatch: the bulk path stores what one
// RememberBatch per batch stores (same outcome per input, records, and
// answers), and every index is up to date when it returns, though the
// index update of each batch runs while the next one commits.
func TestRememberBatchesMatchesRememberBatch(t *testing.T) {
	for _, tt := range []struct {
		mode       engine.Mode
		n, size    int
		wantBatchs int
	}{
		{engine.ModeFlat, 300, 40, 11},
		{engine.ModeTiered, 300, 40, 11},
		{engine.ModeTiered, 90, 7, 16},
	} {
		t.Run(fmt.Sprintf("%s/%d/%d", tt.mode, tt.n, tt.size), func(t *testing.T) {
			ctx := context.Background()
			batches := bulkBatches(tt.n, tt.size)
			one, bulk := openMode(t, tt.mode, false), openMode(t, tt.mode, true)
			var want [][]engine.Stored
			for _, b := range batches {
				out, err := one.RememberBatch(ctx, b)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, out)
			}
			var got [][]engine.Stored
			n, err := bulk.RememberBatches(ctx, slices.Values(batches), func(i int, out []engine.Stored) {
				if i != len(got) {
					t.Errorf("done called for batch %d after %d batches", i, len(got))
				}
				got = append(got, out)
			})
			if err != nil || n != tt.wantBatchs || n != len(batches) {
				t.Fatalf("RememberBatches = %d, %v; want %d batches, nil", n, err, tt.wantBatchs)
			}
			for i := range want {
				if !slices.Equal(got[i], want[i]) {
					t.Errorf("batch %d: outcome %v, want %v", i, got[i], want[i])
				}
			}
			if dups := got[5]; !dups[0].Duplicate {
				t.Errorf("the repeated keyed batch was stored again: %v", dups)
			}
			ws, _ := one.Stats()
			gs, err := bulk.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if gs.Records != ws.Records || gs.LogSeq != ws.LogSeq {
				t.Errorf("bulk store: %d records, log %d; want %d, %d", gs.Records, gs.LogSeq, ws.Records, ws.LogSeq)
			}
			if gs.TextWatermark != gs.LogSeq {
				t.Errorf("text index at %d when RememberBatches returned, change log at %d", gs.TextWatermark, gs.LogSeq)
			}
			for _, b := range batches {
				q := engine.Query{Text: b.Inputs[len(b.Inputs)/2].Text, K: 5, NoAccess: true}
				if w, g := recallIDs(t, one, q), recallIDs(t, bulk, q); !slices.Equal(g, w) {
					t.Errorf("Recall(%q) = %v, want %v", q.Text, g, w)
				}
			}
		})
	}
}

// TestRememberBatchesStopsAtInvalidBatch: a batch with an invalid input
// is not stored, the batches before it are (and indexed), and the
// batches after it are not read.
func TestRememberBatchesStopsAtInvalidBatch(t *testing.T) {
	for _, tt := range []struct {
		name string
		bad  engine.Input
		at   int
		want error
	}{
		{"empty text first", engine.Input{Text: " "}, 0, engine.ErrEmptyText},
		{"invalid utf-8 third", engine.Input{Text: "bad \xff"}, 2, engine.ErrInvalidUTF8},
		{"bad label last", engine.Input{Text: "ok", Scope: "a\x00b"}, 3, engine.ErrInvalidInput},
	} {
		t.Run(tt.name, func(t *testing.T) {
			batches := slices.Delete(bulkBatches(80, 20), 3, 6)
			batches[tt.at].Inputs = append(slices.Clone(batches[tt.at].Inputs), tt.bad)
			e := openMode(t, engine.ModeFlat, true)
			read := 0
			var seq iter.Seq[engine.Batch] = func(yield func(engine.Batch) bool) {
				for _, b := range batches {
					read++
					if !yield(b) {
						return
					}
				}
			}
			stored := 0
			n, err := e.RememberBatches(context.Background(), seq, func(_ int, out []engine.Stored) { stored += len(out) })
			if !errors.Is(err, tt.want) || n != tt.at {
				t.Fatalf("RememberBatches = %d, %v; want %d, %v", n, err, tt.at, tt.want)
			}
			if read != tt.at+1 {
				t.Errorf("%d batches read, want %d", read, tt.at+1)
			}
			st, err := e.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if st.Records != stored || st.Records != 20*tt.at {
				t.Errorf("%d records stored (done saw %d), want %d", st.Records, stored, 20*tt.at)
			}
			if st.TextWatermark != st.LogSeq {
				t.Errorf("text index at %d, change log at %d", st.TextWatermark, st.LogSeq)
			}
		})
	}
}

// TestInBatchDuplicateKeepsSourcesInTiers: a duplicate within one batch
// adds its sources to the record stored earlier in the batch, and the
// tiers, loaded after the commit, hold the record with both.
func TestInBatchDuplicateKeepsSourcesInTiers(t *testing.T) {
	for _, bulk := range []bool{false, true} {
		t.Run(fmt.Sprintf("bulk=%v", bulk), func(t *testing.T) {
			e := openMode(t, engine.ModeTiered, false)
			b := engine.Batch{Inputs: []engine.Input{
				{Scope: "u", Session: "s", Role: "user", Text: "The staging database runs on port 5433.", Sources: []string{"chat:1"}},
				{Scope: "u", Session: "s", Role: "user", Text: "The  staging database runs on PORT 5433.", Sources: []string{"chat:2"}},
			}}
			var err error
			if bulk {
				_, err = e.RememberBatches(context.Background(), slices.Values([]engine.Batch{b}), nil)
			} else {
				_, err = e.RememberBatch(context.Background(), b)
			}
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Recall(context.Background(), engine.Query{Text: "staging database port", Scope: "u", NoAccess: true})
			if err != nil || len(res) == 0 {
				t.Fatalf("Recall = %v, %v", res, err)
			}
			if got := res[0].Record.Sources; !slices.Equal(got, []string{"chat:1", "chat:2"}) {
				t.Errorf("recalled record's sources %v, want both turns'", got)
			}
		})
	}
}

// TestRememberBatchesIteratorReusesItsArrays: an iterator may fill the
// same arrays (inputs and their sources) for every batch it yields;
// RememberBatches, which reads the next batch while one commits, stores
// what one RememberBatch per batch stores.
func TestRememberBatchesIteratorReusesItsArrays(t *testing.T) {
	ctx := context.Background()
	batches := bulkBatches(200, 30)
	for i := range batches {
		for j := range batches[i].Inputs {
			if j%3 == 0 {
				batches[i].Inputs[j].Sources = []string{fmt.Sprintf("src:%d:%d", i, j)}
			}
		}
	}
	one, bulk := openMode(t, engine.ModeFlat, false), openMode(t, engine.ModeFlat, false)
	var want []engine.Stored
	for _, b := range batches {
		out, err := one.RememberBatch(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, out...)
	}
	buf := make([]engine.Input, 0, 64)
	srcs := make([][]string, 64)
	reusing := func(yield func(engine.Batch) bool) {
		for _, b := range batches {
			buf = buf[:0]
			for j, in := range b.Inputs {
				if in.Sources != nil {
					srcs[j] = append(srcs[j][:0], in.Sources...)
					in.Sources = srcs[j]
				}
				buf = append(buf, in)
			}
			if !yield(engine.Batch{Key: b.Key, Inputs: buf}) {
				return
			}
		}
	}
	var got []engine.Stored
	if _, err := bulk.RememberBatches(ctx, reusing, func(_ int, out []engine.Stored) { got = append(got, out...) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("outcomes differ:\n got %v\nwant %v", got, want)
	}
	for _, s := range want {
		w, err := one.Get(s.ID)
		if err != nil {
			t.Fatal(err)
		}
		g, err := bulk.Get(s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if g.Text != w.Text || g.Session != w.Session || !slices.Equal(g.Sources, w.Sources) || !g.Time.Equal(w.Time) {
			t.Fatalf("record %d: %q %q %v, want %q %q %v", s.ID, g.Text, g.Session, g.Sources, w.Text, w.Session, w.Sources)
		}
	}
}
