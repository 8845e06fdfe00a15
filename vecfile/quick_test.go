package vecfile_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/localllm/static"
	"github.com/hmo-dev/hmo/synth"
	"github.com/hmo-dev/hmo/vecfile"
)

// quickOpts are the options of an Int8Rescore index that takes the
// 4-bit pass from 100 rows; noQuick never takes it.
func quickOpts(d int) *vecfile.Options {
	return &vecfile.Options{Dims: d, Format: vecfile.Int8Rescore, QuickAbove: 100}
}

func noQuick(d int) *vecfile.Options {
	return &vecfile.Options{Dims: d, Format: vecfile.Int8Rescore, QuickAbove: -1}
}

// compareQuick searches both indexes with the queries, filters and ks
// and checks the 4-bit path's candidates against the int8 scan's: every
// one passes the filter and is live, its score is the int8 scan's score
// of that id, and together they hold at least minShare of the int8
// scan's. It returns the share they hold.
func compareQuick(t *testing.T, label string, q4, i8 *vecfile.Index, qs []engine.VectorDoc, minShare float64) float64 {
	t.Helper()
	filters := []engine.VectorFilter{
		{}, {Scope: "scope1"}, {Session: "s7"},
		{From: t0.Add(100 * time.Minute), To: t0.Add(900 * time.Minute)},
	}
	var sum float64
	count := 0
	for i, q := range qs {
		fl := filters[i%len(filters)]
		for _, k := range []int{1, 10, 40} {
			c := i8.RescoreCandidates(k)
			want, err := i8.SearchFilter(q.Vector, c, fl)
			if err != nil {
				t.Fatal(err)
			}
			got, err := q4.SearchFilter(q.Vector, c, fl)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s query %d k %d %+v: %d candidates, int8 scan %d", label, i, k, fl, len(got), len(want))
			}
			score := map[uint64]float32{}
			for _, h := range want {
				score[h.ID] = h.Score
			}
			// Scores are the int8 ones: compare with an exhaustive int8
			// search of the id (all candidates of a big enough k).
			all, err := i8.SearchFilter(q.Vector, 1<<20, fl)
			if err != nil {
				t.Fatal(err)
			}
			allScore := map[uint64]float32{}
			for _, h := range all {
				allScore[h.ID] = h.Score
			}
			for j, h := range got {
				s, ok := allScore[h.ID]
				if !ok {
					t.Fatalf("%s query %d: candidate %d fails the filter %+v or is deleted", label, i, h.ID, fl)
				}
				if s != h.Score {
					t.Fatalf("%s query %d: id %d scored %v, int8 scan %v", label, i, h.ID, h.Score, s)
				}
				if j > 0 && (got[j-1].Score < h.Score || got[j-1].Score == h.Score && got[j-1].ID > h.ID) {
					t.Fatalf("%s query %d: candidates out of order: %v", label, i, got)
				}
			}
			sum += overlap(ids(got), ids(want))
			count++
		}
	}
	share := sum / float64(count)
	if share < minShare {
		t.Fatalf("%s: the 4-bit path holds %.4f of the int8 scan's candidates, want >= %.4f", label, share, minShare)
	}
	return share
}

// TestQuickMatchesInt8 compares the 4-bit path with the int8 scan on the
// same rows, with filters, replacements, deletions, after appends past
// the q4 file's build, a reopen and a compaction; and checks the q4
// file's presence, size and mode.
func TestQuickMatchesInt8(t *testing.T) {
	for _, d := range []int{3, 16, 37, 100} {
		t.Run(fmt.Sprint(d, "dims"), func(t *testing.T) {
			dq, di := t.TempDir(), t.TempDir()
			q4, i8 := open(t, dq, quickOpts(d)), open(t, di, noQuick(d))
			ds := docsDims(1, 3000, d)
			for _, x := range []*vecfile.Index{q4, i8} {
				mustApply(t, x, ds[:2000], nil, 1)
			}
			if _, err := os.Stat(filepath.Join(dq, "q4")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a new index has a q4 file: %v", err)
			}
			// Reopened past QuickAbove: the q4 file is built.
			mustClose(t, q4)
			q4 = open(t, dq, quickOpts(d))
			st, err := os.Stat(filepath.Join(dq, "q4"))
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Fatalf("q4 mode %v", st.Mode().Perm())
			}
			qs := docsDims(3, 24, d)
			compareQuick(t, "built", q4, i8, qs, 0.99)
			// Appends, replacements and deletions go into the q4 rows.
			repl := docsDims(2, 100, d)
			for i := range repl {
				repl[i].ID = uint64(2*i + 1)
			}
			dels := []uint64{4, 10, 2999, 1500}
			for _, x := range []*vecfile.Index{q4, i8} {
				mustApply(t, x, ds[2000:], nil, 2)
				mustApply(t, x, repl, dels, 3)
			}
			compareQuick(t, "applied", q4, i8, qs, 0.99)
			mustClose(t, q4)
			// Close cuts the file to its rows: 64 bytes a row at 100 dims.
			if st, err := os.Stat(filepath.Join(dq, "q4")); err != nil || d == 100 && st.Size() != 4096+3000*64 {
				t.Fatalf("q4 file after Close: %v, %v", st, err)
			}
			q4 = open(t, dq, quickOpts(d))
			compareQuick(t, "reopened", q4, i8, qs, 0.99)
			for _, x := range []*vecfile.Index{q4, i8} {
				if err := x.Compact(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			compareQuick(t, "compacted", q4, i8, qs, 0.99)
			mustClose(t, q4)
			mustClose(t, i8)
		})
	}
}

// TestQuickRecallStatic measures the final top 10 and top 100 (the int8
// candidates rescored in float32) of the 4-bit path against the exact
// float32 scan on the static embedder's vectors of 20,000 synthetic
// records, with the default Quick.
func TestQuickRecallStatic(t *testing.T) {
	s := newStaticSet(t)
	dir := t.TempDir()
	q4 := open(t, dir, quickOpts(s.dims))
	mustApply(t, q4, s.ds, nil, 1)
	mustClose(t, q4)
	q4 = open(t, dir, quickOpts(s.dims))
	defer q4.Close()
	for _, k := range []int{10, 100} {
		recall, used := s.recall(t, q4, k)
		t.Logf("recall@%d of the 4-bit path, rescored, against the float32 scan: %.4f over %d queries, %d vectors",
			k, recall, used, len(s.ds))
		if recall < 0.99 {
			t.Fatalf("recall@%d %.4f < 0.99", k, recall)
		}
	}
}

// staticSet is the static embedder's vectors of 20,000 synthetic records
// and of 200 queries, with an exact float32 index of the records.
type staticSet struct {
	ds    []engine.VectorDoc
	byID  map[uint64][]float32
	qv    [][]float32
	dims  int
	exact *vecfile.Index
}

// newStaticSet embeds the set; it skips a short test.
func newStaticSet(t *testing.T) *staticSet {
	if testing.Short() {
		t.Skip("embeds 20,000 records")
	}
	emb, err := static.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	var texts []string
	for _, in := range synth.New(synth.Options{Seed: 42, Records: n}).Next(n) {
		texts = append(texts, in.Text)
	}
	vecs, err := emb.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	s := &staticSet{byID: map[uint64][]float32{}, dims: emb.Dims()}
	for i, v := range vecs {
		if v != nil {
			s.ds = append(s.ds, engine.VectorDoc{ID: uint64(i + 1), Vector: v})
			s.byID[uint64(i+1)] = v
		}
	}
	if s.qv, err = emb.Embed(context.Background(), synth.Queries(3, 200)); err != nil {
		t.Fatal(err)
	}
	s.exact = open(t, t.TempDir(), &vecfile.Options{Dims: s.dims, Scan: vecfile.ScanFloat32})
	t.Cleanup(func() { s.exact.Close() })
	mustApply(t, s.exact, s.ds, nil, 1)
	return s
}

// recall is the mean share of the exact top k that x's top k (its
// RescoreCandidates(k) rescored in float32) holds, over the queries
// embedded to a vector (used of them).
func (s *staticSet) recall(t *testing.T, x *vecfile.Index, k int) (recall float64, used int) {
	t.Helper()
	var sum float64
	for _, q := range s.qv {
		if q == nil {
			continue
		}
		want, err := s.exact.Search(q, k)
		if err != nil {
			t.Fatal(err)
		}
		cands, err := x.Search(q, x.RescoreCandidates(k))
		if err != nil {
			t.Fatal(err)
		}
		sum += overlap(ids(rescored(cands, q, s.byID, k)), ids(want))
		used++
	}
	return sum / float64(used), used
}

// TestQuickRecovers: a q4 file that is missing, damaged in a row or its
// header, cut short, or of another matrix is regenerated at Open, byte
// for byte what a fresh build writes; a read-only Open scans the int8
// rows instead and writes nothing; an index below QuickAbove removes it.
func TestQuickRecovers(t *testing.T) {
	const d = 100
	dir := t.TempDir()
	x := open(t, dir, quickOpts(d))
	ds := docsDims(1, 1500, d)
	mustApply(t, x, ds, []uint64{5}, 1)
	mustClose(t, x)
	x = open(t, dir, quickOpts(d))
	mustClose(t, x)
	p := filepath.Join(dir, "q4")
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	i8 := open(t, t.TempDir(), noQuick(d))
	mustApply(t, i8, ds, []uint64{5}, 1)
	defer i8.Close()
	qs := docsDims(3, 12, d)
	other := slices.Clone(good)
	other[16] ^= 1 // the matrix identity
	for _, tc := range []struct {
		name   string
		damage func() error
	}{
		{"missing", func() error { return os.Remove(p) }},
		{"row byte", func() error { return flip(p, 4096+700*64+3) }},
		{"row check", func() error { return flip(p, 4096+64*64+60) }},
		{"header centre", func() error { return flip(p, 40) }},
		{"cut short", func() error { return os.Truncate(p, 4096+100*64+7) }},
		{"other matrix", func() error { return os.WriteFile(p, other, 0o600) }},
		{"empty", func() error { return os.WriteFile(p, nil, 0o600) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(p, good, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := tc.damage(); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(p)
			ro := quickOpts(d)
			ro.ReadOnly = true
			r := open(t, dir, ro)
			compareQuick(t, "read-only", r, i8, qs, 1)
			mustClose(t, r)
			if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
				t.Fatal("a read-only Open changed the q4 file")
			}
			x := open(t, dir, quickOpts(d))
			compareQuick(t, "regenerated", x, i8, qs, 0.99)
			mustClose(t, x)
			if got, _ := os.ReadFile(p); !bytes.Equal(got, good) {
				t.Fatalf("regenerated q4 file differs from a fresh build (%d bytes, want %d)", len(got), len(good))
			}
		})
	}
	// Opened with the pass off, or below its threshold: no q4 file.
	for _, above := range []int{-1, 5000} {
		o := quickOpts(d)
		o.QuickAbove = above
		x := open(t, dir, o)
		compareQuick(t, fmt.Sprint("QuickAbove ", above), x, i8, qs, 1)
		mustClose(t, x)
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("QuickAbove %d: q4 file kept: %v", above, err)
		}
	}
}

// TestQuickCentreRebuilt: a q4 file whose centre was computed from fewer
// than half of the live rows is rebuilt at Open around the new centre.
func TestQuickCentreRebuilt(t *testing.T) {
	const d = 16
	dir := t.TempDir()
	x := open(t, dir, quickOpts(d))
	ds := docsDims(1, 1000, d)
	mustApply(t, x, ds[:200], nil, 1)
	mustClose(t, x)
	x = open(t, dir, quickOpts(d)) // built from 200 rows
	// Rows far from the first ones' centre.
	far := ds[200:]
	for i := range far {
		for j := range far[i].Vector {
			far[i].Vector[j] += 5
		}
	}
	mustApply(t, x, far, nil, 2)
	mustClose(t, x)
	p := filepath.Join(dir, "q4")
	stale, _ := os.ReadFile(p)
	x = open(t, dir, quickOpts(d))
	mustClose(t, x)
	rebuilt, _ := os.ReadFile(p)
	if bytes.Equal(stale[:4096], rebuilt[:4096]) {
		t.Fatal("the header (centre) was not rebuilt for 1000 rows")
	}
	// A fresh build from the same rows writes the same file.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	x = open(t, dir, quickOpts(d))
	mustClose(t, x)
	if fresh, _ := os.ReadFile(p); !bytes.Equal(fresh, rebuilt) {
		t.Fatal("rebuilt q4 file differs from a fresh build")
	}
}

func TestQuickOptions(t *testing.T) {
	for _, o := range []vecfile.Options{
		{Dims: dims, Quick: -1}, {Dims: dims, Quick: 1025},
	} {
		if _, err := vecfile.Open(t.TempDir(), &o); !errors.Is(err, vecfile.ErrOptions) {
			t.Fatalf("%+v: %v, want ErrOptions", o, err)
		}
	}
}

// flip inverts the low bit of the byte at off of the file p.
func flip(p string, off int) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if off >= len(b) {
		return fmt.Errorf("flip: offset %d past %d bytes", off, len(b))
	}
	b[off] ^= 1
	return os.WriteFile(p, b, 0o600)
}
