package fts_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
)

// open opens a new index in a temporary directory and closes it at the end
// of the test.
func open(t testing.TB, opts *fts.Options) *fts.Index {
	t.Helper()
	x, err := fts.Open(filepath.Join(t.TempDir(), "text"), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = x.Close() })
	return x
}

func apply(t testing.TB, x *fts.Index, docs []engine.TextDoc, deletes []uint64, wm uint64) {
	t.Helper()
	if err := x.Apply(docs, deletes, wm); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

func search(t testing.TB, x *fts.Index, q string, k int, f engine.TextFilter) []engine.TextHit {
	t.Helper()
	hits, err := x.Search(context.Background(), q, k, f)
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	return hits
}

func ids(hits []engine.TextHit) []uint64 {
	out := make([]uint64, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func TestSearch(t *testing.T) {
	x := open(t, nil)
	apply(t, x, []engine.TextDoc{
		{ID: 1, Text: "common apple pear"},
		{ID: 2, Text: "rare apple pear"},
		{ID: 3, Text: "common plum fig"},
		{ID: 4, Text: "She runs every morning before work"},
		{ID: 5, Text: "Melanie's painting of a sunset over the lake"},
		{ID: 6, Text: "common kiwi lime"},
		{ID: 7, Text: "We adopted two puppies last spring"},
		{ID: 8, Text: "violet petals fell slowly onto the wooden bench"},
		{ID: 9, Text: "violet"},
		{ID: 1 << 63, Text: "large identifiers round trip"},
	}, nil, 1)
	tests := []struct {
		name  string
		query string
		want  []uint64 // ids in order
	}{
		{"rarer term ranks first, ties by id", "common rare", []uint64{2, 1, 3, 6}},
		{"shorter document ranks first", "violet", []uint64{9, 8}},
		{"stemming running finds runs", "running", []uint64{4}},
		{"stemming plural", "puppy", []uint64{7}},
		{"possessive", "melanie", []uint64{5}},
		{"possessive in query", "MELANIE'S sunsets", []uint64{5}},
		{"case folded", "ORCHARD PLUM", []uint64{3}},
		{"or semantics, shorter first", "lime morning", []uint64{6, 4}},
		{"stop words ignored", "the common and the rare", []uint64{2, 1, 3, 6}},
		{"no match", "zebra", []uint64{}},
		{"large id", "identifiers", []uint64{1 << 63}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(search(t, x, tt.query, 10, engine.TextFilter{}))
			if !slices.Equal(got, tt.want) {
				t.Errorf("Search(%q) = %v, want %v", tt.query, got, tt.want)
			}
		})
	}
}

func TestSearchScoresDescendAndK(t *testing.T) {
	x := open(t, nil)
	var docs []engine.TextDoc
	for i := range 30 {
		text := "apple"
		for range i % 5 {
			text += " pear"
		}
		docs = append(docs, engine.TextDoc{ID: uint64(i + 1), Text: text})
	}
	apply(t, x, docs, nil, 1)
	for _, k := range []int{1, 7, 30, 100} {
		hits := search(t, x, "apple pear", k, engine.TextFilter{})
		if want := min(k, 30); len(hits) != want {
			t.Errorf("k=%d: got %d hits, want %d", k, len(hits), want)
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score > hits[i-1].Score {
				t.Errorf("k=%d: hit %d score %v > hit %d score %v", k, i, hits[i].Score, i-1, hits[i-1].Score)
			}
		}
		if hits[0].Score <= 0 {
			t.Errorf("k=%d: top score %v, want > 0", k, hits[0].Score)
		}
	}
}

func TestFilters(t *testing.T) {
	x := open(t, nil)
	day := func(d int) time.Time { return time.Date(2023, 5, d, 12, 0, 0, 0, time.UTC) }
	apply(t, x, []engine.TextDoc{
		{ID: 1, Text: "hiking trip", Scope: "alice", Session: "s1", Time: day(1)},
		{ID: 2, Text: "hiking boots", Scope: "alice", Session: "s2", Time: day(2)},
		{ID: 3, Text: "hiking map", Scope: "bob", Session: "s1", Time: day(3)},
		{ID: 4, Text: "hiking club", Scope: "bob", Session: "s3", Time: day(4)},
		{ID: 5, Text: "hiking alone", Scope: "alice bob", Session: "S1"},
		{ID: 6, Text: "hiking pole", Scope: "carol", Time: day(5).Add(1500 * time.Millisecond)},
		{ID: 7, Text: "hiking in 1900", Scope: "dave", Time: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)},
	}, nil, 1)
	year := func(y int) time.Time { return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name string
		f    engine.TextFilter
		want []uint64
	}{
		{"none", engine.TextFilter{}, []uint64{1, 2, 3, 4, 5, 6, 7}},
		{"scope", engine.TextFilter{Scope: "alice"}, []uint64{1, 2}},
		{"scope is exact", engine.TextFilter{Scope: "alice bob"}, []uint64{5}},
		{"scope unknown", engine.TextFilter{Scope: "erin"}, []uint64{}},
		{"session is case sensitive", engine.TextFilter{Session: "s1"}, []uint64{1, 3}},
		{"scope and session", engine.TextFilter{Scope: "bob", Session: "s1"}, []uint64{3}},
		{"from inclusive", engine.TextFilter{From: day(3)}, []uint64{3, 4, 6}},
		{"to exclusive", engine.TextFilter{To: day(3)}, []uint64{1, 2, 7}},
		{"range", engine.TextFilter{From: day(2), To: day(4)}, []uint64{2, 3}},
		{"range and scope", engine.TextFilter{Scope: "alice", From: day(2), To: day(4)}, []uint64{2}},
		{"empty range", engine.TextFilter{From: day(4), To: day(4)}, []uint64{}},
		{"far range", engine.TextFilter{From: year(1), To: year(9999)}, []uint64{1, 2, 3, 4, 6, 7}},
		{"before 1970", engine.TextFilter{From: year(1899), To: year(1901)}, []uint64{7}},
		{"same second counts", engine.TextFilter{From: day(5).Add(1900 * time.Millisecond)}, []uint64{6}},
		{"next second", engine.TextFilter{From: day(5).Add(2 * time.Second)}, []uint64{}},
		{"to in the same second", engine.TextFilter{Scope: "carol", To: day(5).Add(1900 * time.Millisecond)}, []uint64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(search(t, x, "hiking", 10, tt.f))
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Search with %+v = %v, want %v", tt.f, got, tt.want)
			}
		})
	}
}

func TestFilterKeepsScores(t *testing.T) {
	x := open(t, nil)
	apply(t, x, []engine.TextDoc{
		{ID: 1, Text: "red kite over the hill", Scope: "a"},
		{ID: 2, Text: "red red kite", Scope: "b"},
		{ID: 3, Text: "blue kite", Scope: "a"},
	}, nil, 1)
	all := search(t, x, "red kite", 10, engine.TextFilter{})
	scoped := search(t, x, "red kite", 10, engine.TextFilter{Scope: "a"})
	want := map[uint64]float64{}
	for _, h := range all {
		want[h.ID] = h.Score
	}
	if len(scoped) != 2 {
		t.Fatalf("scoped hits = %v, want 2", scoped)
	}
	for _, h := range scoped {
		if h.Score != want[h.ID] {
			t.Errorf("id %d: filtered score %v, unfiltered %v", h.ID, h.Score, want[h.ID])
		}
	}
}

func TestDeleteAndReplace(t *testing.T) {
	x := open(t, nil)
	apply(t, x, []engine.TextDoc{
		{ID: 1, Text: "violin lessons"},
		{ID: 2, Text: "violin concert"},
		{ID: 3, Text: "guitar lessons"},
	}, nil, 1)
	steps := []struct {
		name    string
		docs    []engine.TextDoc
		deletes []uint64
		query   string
		want    []uint64
		count   uint64
	}{
		{"delete", nil, []uint64{2}, "violin", []uint64{1}, 2},
		{"delete absent", nil, []uint64{99}, "violin", []uint64{1}, 2},
		{"replace", []engine.TextDoc{{ID: 1, Text: "piano lessons"}}, nil, "violin", []uint64{}, 2},
		{"replaced text found", nil, nil, "piano", []uint64{1}, 2},
		{"delete wins over add", []engine.TextDoc{{ID: 4, Text: "drum lessons"}}, []uint64{4}, "drum", []uint64{}, 2},
		{"re-add deleted", []engine.TextDoc{{ID: 2, Text: "violin again"}}, nil, "violin", []uint64{2}, 3},
	}
	for i, s := range steps {
		apply(t, x, s.docs, s.deletes, uint64(i+2))
		got := ids(search(t, x, s.query, 10, engine.TextFilter{}))
		if !slices.Equal(got, s.want) {
			t.Errorf("%s: Search(%q) = %v, want %v", s.name, s.query, got, s.want)
		}
		n, err := x.DocCount()
		if err != nil || n != s.count {
			t.Errorf("%s: DocCount = %d, %v, want %d", s.name, n, err, s.count)
		}
	}
}

func TestWatermarkPersists(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "text")
	x, err := fts.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if wm, err := x.Watermark(); err != nil || wm != 0 {
		t.Fatalf("new index Watermark = %d, %v, want 0", wm, err)
	}
	apply(t, x, []engine.TextDoc{{ID: 1, Text: "kept across restarts"}}, nil, 41)
	apply(t, x, nil, nil, 1<<40) // a watermark-only batch
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x, err = fts.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if wm, err := x.Watermark(); err != nil || wm != 1<<40 {
		t.Errorf("reopened Watermark = %d, %v, want %d", wm, err, uint64(1<<40))
	}
	if got := ids(search(t, x, "restarts", 10, engine.TextFilter{})); !slices.Equal(got, []uint64{1}) {
		t.Errorf("reopened Search = %v, want [1]", got)
	}
}

func TestNoIndexableTerms(t *testing.T) {
	tests := []struct {
		analyzer fts.Analyzer
		query    string
	}{
		{fts.AnalyzerEnglishKeepStop, ""},
		{fts.AnalyzerEnglish, "   \t\n"},
		{fts.AnalyzerEnglish, "?! ... --"},
		{fts.AnalyzerEnglish, "what is the"},
		{fts.AnalyzerStandard, "to be or not to be"},
	}
	for _, tt := range tests {
		t.Run(string(tt.analyzer)+"/"+tt.query, func(t *testing.T) {
			x := open(t, &fts.Options{Analyzer: tt.analyzer})
			apply(t, x, []engine.TextDoc{{ID: 1, Text: "what is the plan", Scope: "s"}}, nil, 1)
			for _, f := range []engine.TextFilter{{}, {Scope: "s"}} {
				hits, err := x.Search(context.Background(), tt.query, 5, f)
				if err != nil || len(hits) != 0 {
					t.Errorf("Search(%q, %+v) = %v, %v, want no hits, no error", tt.query, f, hits, err)
				}
			}
		})
	}
}

func TestBadK(t *testing.T) {
	x := open(t, nil)
	apply(t, x, []engine.TextDoc{{ID: 1, Text: "anything"}}, nil, 1)
	for _, k := range []int{0, -1} {
		if _, err := x.Search(context.Background(), "anything", k, engine.TextFilter{}); !errors.Is(err, fts.ErrInvalidK) {
			t.Errorf("Search k=%d: err = %v, want ErrInvalidK", k, err)
		}
	}
}

func TestContextDone(t *testing.T) {
	x := open(t, nil)
	apply(t, x, []engine.TextDoc{{ID: 1, Text: "anything"}}, nil, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := x.Search(ctx, "anything", 5, engine.TextFilter{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Search with cancelled ctx: err = %v, want context.Canceled", err)
	}
}

func TestClosed(t *testing.T) {
	x, err := fts.Open(filepath.Join(t.TempDir(), "text"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := x.Close(); err != nil {
		t.Errorf("second Close: %v, want nil", err)
	}
	if err := x.Apply(nil, nil, 1); !errors.Is(err, fts.ErrClosed) {
		t.Errorf("Apply after Close: %v, want ErrClosed", err)
	}
	for _, q := range []string{"words", ""} {
		if _, err := x.Search(context.Background(), q, 1, engine.TextFilter{}); !errors.Is(err, fts.ErrClosed) {
			t.Errorf("Search(%q) after Close: %v, want ErrClosed", q, err)
		}
	}
	if _, err := x.DocCount(); !errors.Is(err, fts.ErrClosed) {
		t.Errorf("DocCount after Close: %v, want ErrClosed", err)
	}
	if _, err := x.Watermark(); !errors.Is(err, fts.ErrClosed) {
		t.Errorf("Watermark after Close: %v, want ErrClosed", err)
	}
}

// TestConcurrentApplySearch runs writers and readers together (run it with
// -race). Every batch adds two documents, so a reader that sees a batch in
// part finds an odd number of hits.
func TestConcurrentApplySearch(t *testing.T) {
	x := open(t, nil)
	const writers, batches = 2, 15
	var seq atomic.Uint64
	var done atomic.Bool
	lastWM := make([]uint64, writers)
	var wg, readers sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range batches {
				id := uint64(w*1000 + 2*i)
				wm := seq.Add(1)
				err := x.Apply([]engine.TextDoc{
					{ID: id, Text: "shared words"}, {ID: id + 1, Text: "shared words too"},
				}, nil, wm)
				if err != nil {
					t.Errorf("Apply: %v", err)
					return
				}
				lastWM[w] = wm
			}
		})
	}
	for range 3 {
		readers.Go(func() {
			for !done.Load() {
				hits, err := x.Search(context.Background(), "shared", 1000, engine.TextFilter{})
				if err != nil {
					t.Errorf("Search: %v", err)
					return
				}
				if len(hits)%2 != 0 {
					t.Errorf("Search saw %d hits: a batch in part", len(hits))
					return
				}
			}
		})
	}
	wg.Wait()
	done.Store(true)
	readers.Wait()
	if n, err := x.DocCount(); err != nil || n != 2*writers*batches {
		t.Errorf("DocCount = %d, %v, want %d", n, err, 2*writers*batches)
	}
	wm, err := x.Watermark()
	if err != nil || !slices.Contains(lastWM, wm) {
		t.Errorf("Watermark = %d, %v, want the last of a writer, one of %v", wm, err, lastWM)
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name string
		opts *fts.Options
		err  error
	}{
		{"nil", nil, nil},
		{"zero", &fts.Options{}, nil},
		{"each analyzer", &fts.Options{Analyzer: fts.AnalyzerPlain}, nil},
		{"unknown analyzer", &fts.Options{Analyzer: "klingon"}, fts.ErrInvalidOption},
		{"negative timeout", &fts.Options{LockTimeout: -time.Second}, fts.ErrInvalidOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := fts.Open(filepath.Join(t.TempDir(), "text"), tt.opts)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Open: err = %v, want %v", err, tt.err)
			}
			if x != nil {
				_ = x.Close()
			}
		})
	}
}

func TestIncompatible(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "text")
	x, err := fts.Open(dir, &fts.Options{Analyzer: fts.AnalyzerEnglish})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fts.Open(dir, &fts.Options{Analyzer: fts.AnalyzerStandard}); !errors.Is(err, fts.ErrIncompatible) {
		t.Errorf("Open with another analyzer: err = %v, want ErrIncompatible", err)
	}
	x, err = fts.Open(dir, &fts.Options{Analyzer: fts.AnalyzerEnglish})
	if err != nil {
		t.Fatalf("Open with the same analyzer after a refusal: %v", err)
	}
	_ = x.Close()
}

func TestLocked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "text")
	x, err := fts.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	y, err := fts.Open(dir, &fts.Options{LockTimeout: 50 * time.Millisecond})
	if !errors.Is(err, fts.ErrLocked) {
		t.Errorf("second Open: err = %v, want ErrLocked", err)
	}
	if y != nil {
		_ = y.Close()
	}
}

func TestCorrupt(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(t *testing.T, dir string)
	}{
		{"dir is a file", func(t *testing.T, dir string) {
			must(t, os.RemoveAll(dir))
			must(t, os.WriteFile(dir, []byte("x"), 0o600))
		}},
		{"foreign files", func(t *testing.T, dir string) {
			must(t, os.RemoveAll(dir))
			must(t, os.MkdirAll(dir, 0o700))
			must(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600))
		}},
		{"garbage metadata", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "index_meta.json"), []byte("{{{"), 0o600))
		}},
		{"no store", func(t *testing.T, dir string) {
			must(t, os.RemoveAll(filepath.Join(dir, "store")))
		}},
		{"garbage root.bolt", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "store", "root.bolt"), make([]byte, 8192), 0o600))
		}},
		{"segment byte flipped", func(t *testing.T, dir string) {
			for _, z := range segments(t, dir) {
				b, err := os.ReadFile(z)
				must(t, err)
				b[len(b)/2] ^= 0x01
				must(t, os.WriteFile(z, b, 0o600))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "text")
			x, err := fts.Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			apply(t, x, []engine.TextDoc{{ID: 1, Text: "some words"}}, nil, 1)
			must(t, x.Close())
			tt.spoil(t, dir)
			x, err = fts.Open(dir, nil)
			if !errors.Is(err, fts.ErrCorrupt) {
				t.Errorf("Open: err = %v, want ErrCorrupt", err)
			}
			if x != nil {
				_ = x.Close()
			}
			// The remedy the engine applies: remove and rebuild.
			must(t, os.RemoveAll(dir))
			x, err = fts.Open(dir, nil)
			if err != nil {
				t.Fatalf("Open after removal: %v", err)
			}
			_ = x.Close()
		})
	}
}

func TestFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "text")
	x, err := fts.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		apply(t, x, []engine.TextDoc{{ID: uint64(i), Text: "some words"}}, nil, uint64(i+1))
	}
	must(t, x.Close())
	n := 0
	err = filepath.WalkDir(filepath.Dir(dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", p, got, want)
		}
		n++
		return nil
	})
	must(t, err)
	if n < 5 {
		t.Errorf("walked %d entries, want at least 5", n)
	}
}

// TestTruncatedSegments checks the invariant the engine relies on when
// segment files are cut short: Open fails with ErrCorrupt, or scorch falls
// back to an older snapshot whose content matches its watermark.
func TestTruncatedSegments(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "text")
	x, err := fts.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, x, []engine.TextDoc{{ID: 1, Text: "some words"}}, nil, 1)
	must(t, x.Close())
	for _, z := range segments(t, dir) {
		must(t, os.Truncate(z, 100))
	}
	x, err = fts.Open(dir, nil)
	if errors.Is(err, fts.ErrCorrupt) {
		t.Logf("Open: %v", err)
		return
	}
	if err != nil {
		t.Fatalf("Open: err = %v, want nil or ErrCorrupt", err)
	}
	defer x.Close()
	wm, err := x.Watermark()
	must(t, err)
	n, err := x.DocCount()
	must(t, err)
	t.Logf("fell back to watermark %d with %d docs", wm, n)
	if n != wm {
		t.Errorf("after fallback: %d docs at watermark %d, want equal", n, wm)
	}
}

// segments lists the segment files of the index in dir.
func segments(t *testing.T, dir string) []string {
	t.Helper()
	zaps, err := filepath.Glob(filepath.Join(dir, "store", "*.zap"))
	must(t, err)
	if len(zaps) == 0 {
		t.Fatal("no segment files")
	}
	return zaps
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestAsyncPersist: with AsyncPersist, Apply returns before the disk has
// the batch; DurableWatermark catches up with Watermark, and Close waits
// for it, so a clean reopen has every batch.
func TestAsyncPersist(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "text")
	o := &fts.Options{AsyncPersist: true}
	x, err := fts.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(1); i <= 50; i++ {
		apply(t, x, []engine.TextDoc{{ID: i, Text: "async batch number"}}, nil, i)
		if d, _ := x.DurableWatermark(); d > i {
			t.Fatalf("durable watermark %d ahead of the applied %d", d, i)
		}
	}
	if got := len(search(t, x, "async", 100, engine.TextFilter{})); got != 50 {
		t.Fatalf("searchable before persist: %d docs, want 50", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for d, _ := x.DurableWatermark(); d != 50; d, _ = x.DurableWatermark() {
		if time.Now().After(deadline) {
			t.Fatalf("durable watermark stuck at %d, want 50", d)
		}
		time.Sleep(5 * time.Millisecond)
	}
	apply(t, x, []engine.TextDoc{{ID: 51, Text: "async last"}}, nil, 51)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x, err = fts.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if wm, _ := x.Watermark(); wm != 51 {
		t.Fatalf("reopened watermark %d, want 51", wm)
	}
	if d, _ := x.DurableWatermark(); d != 51 {
		t.Fatalf("reopened durable watermark %d, want 51", d)
	}
}

// TestReadOnlyApplyFails: bleve's read-only index never introduces a
// batch, so Apply must fail at once instead of waiting forever (it hung
// "hmo stats" on a full disk, issue 14 finding 3).
func TestReadOnlyApplyFails(t *testing.T) {
	dir := t.TempDir()
	x, err := fts.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Apply([]engine.TextDoc{{ID: 1, Text: "tide"}}, nil, 1); err != nil {
		t.Fatal(err)
	}
	x.Close()
	ro, err := fts.Open(dir, &fts.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	done := make(chan error, 1)
	go func() { done <- ro.Apply([]engine.TextDoc{{ID: 2, Text: "gauge"}}, nil, 2) }()
	select {
	case err := <-done:
		if !errors.Is(err, fts.ErrReadOnly) {
			t.Fatalf("Apply on a read-only index: %v, want ErrReadOnly", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Apply on a read-only index did not return")
	}
	if wm, err := ro.Watermark(); err != nil || wm != 1 {
		t.Fatalf("watermark %d, %v", wm, err)
	}
}

// A scope filter that every document passes is left out of the search;
// deleted and replaced documents must not make a scope look universal.
func TestScopeFilterAfterDeletes(t *testing.T) {
	x := open(t, nil)
	doc := func(id uint64, scope string) engine.TextDoc {
		return engine.TextDoc{ID: id, Text: "red kite", Scope: scope}
	}
	steps := []struct {
		name       string
		docs       []engine.TextDoc
		deletes    []uint64
		wantA      []uint64
		wantB      []uint64
		unfiltered []uint64
	}{
		{"two scopes", []engine.TextDoc{doc(1, "a"), doc(2, "a"), doc(3, "b")}, nil, []uint64{1, 2}, []uint64{3}, []uint64{1, 2, 3}},
		{"b deleted: a is every document", nil, []uint64{3}, []uint64{1, 2}, []uint64{}, []uint64{1, 2}},
		{"a record re-filed under b", []engine.TextDoc{doc(2, "b")}, nil, []uint64{1}, []uint64{2}, []uint64{1, 2}},
		{"re-filed back", []engine.TextDoc{doc(2, "a")}, nil, []uint64{1, 2}, []uint64{}, []uint64{1, 2}},
		{"new b record", []engine.TextDoc{doc(4, "b")}, nil, []uint64{1, 2}, []uint64{4}, []uint64{1, 2, 4}},
	}
	for i, s := range steps {
		apply(t, x, s.docs, s.deletes, uint64(i+1))
		for _, c := range []struct {
			f    engine.TextFilter
			want []uint64
		}{{engine.TextFilter{Scope: "a"}, s.wantA}, {engine.TextFilter{Scope: "b"}, s.wantB}, {engine.TextFilter{}, s.unfiltered}} {
			got := ids(search(t, x, "kite", 10, c.f))
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("%s: Search with %+v = %v, want %v", s.name, c.f, got, c.want)
			}
		}
	}
}

// TestNoGoroutinesLeft: an Index owns its analysis workers and scorch's
// goroutines; a failed Open and a Close stop them all.
func TestNoGoroutinesLeft(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "text")
	x, err := fts.Open(dir, nil)
	must(t, err)
	apply(t, x, []engine.TextDoc{{ID: 1, Text: "some words"}}, nil, 1)
	must(t, x.Close())
	garbage := filepath.Join(t.TempDir(), "garbage")
	must(t, os.MkdirAll(garbage, 0o700))
	must(t, os.WriteFile(filepath.Join(garbage, "index_meta.json"), []byte("{{{"), 0o600))
	before := runtime.NumGoroutine()
	for range 10 {
		if _, err := fts.Open(dir, &fts.Options{Analyzer: fts.AnalyzerPlain}); !errors.Is(err, fts.ErrIncompatible) {
			t.Fatalf("Open with another analyzer: %v, want ErrIncompatible", err)
		}
		if _, err := fts.Open(garbage, nil); !errors.Is(err, fts.ErrCorrupt) {
			t.Fatalf("Open garbage: %v, want ErrCorrupt", err)
		}
		x, err := fts.Open(dir, nil)
		must(t, err)
		search(t, x, "words", 1, engine.TextFilter{})
		must(t, x.Close())
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after 30 Opens, %d before", n, before)
	}
}

// TestCreatedIndexReopens: an index created with AsyncPersist and closed
// at once (`hmo init`) must reopen. The batch that records a new index's
// schema went through scorch's unsafe batch, which Close did not wait
// for, and the next Open found no schema ("text index could not be
// opened (no schema)", seen once after `hmo init` and an import).
func TestCreatedIndexReopens(t *testing.T) {
	for i := range 20 {
		dir := filepath.Join(t.TempDir(), "text")
		o := &fts.Options{AsyncPersist: true}
		x, err := fts.Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		if x, err = fts.Open(dir, o); err != nil {
			t.Fatalf("round %d: reopen after create: %v", i, err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCreateAfterStoppedCreate: a creation stopped half way leaves its
// sibling directory behind; the next Open creates the index anyway and
// leaves no trace of it.
func TestCreateAfterStoppedCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "text")
	if err := os.MkdirAll(filepath.Join(dir+".new", "store"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir+".new", "index_meta.json"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	x, err := fts.Open(dir, &fts.Options{AsyncPersist: true})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, x, []engine.TextDoc{{ID: 1, Text: "after a stopped creation"}}, nil, 1)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + ".new"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the stopped creation's directory is still there: %v", err)
	}
	if x, err = fts.Open(dir, &fts.Options{AsyncPersist: true}); err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if got := len(search(t, x, "stopped", 10, engine.TextFilter{})); got != 1 {
		t.Fatalf("%d hits, want 1", got)
	}
}
