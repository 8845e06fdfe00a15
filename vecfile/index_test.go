package vecfile_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/vecfile"
)

const dims = 16

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// docs returns n seeded documents with ids 1..n in three scopes, sessions
// of ten and one minute apart.
func docs(seed uint64, n int) []engine.VectorDoc {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]engine.VectorDoc, n)
	for i := range out {
		v := make([]float32, dims)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		out[i] = engine.VectorDoc{
			ID: uint64(i + 1), Vector: v, Scope: fmt.Sprint("scope", i%3), Session: fmt.Sprint("s", i/10),
			Time: t0.Add(time.Duration(i) * time.Minute),
		}
	}
	return out
}

func unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(s))
	}
	return out
}

func cosine(a, b []float32) float32 {
	a, b = unit(a), unit(b)
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// brute is the reference: the k best live docs passing f.
func brute(all map[uint64]engine.VectorDoc, q []float32, k int, f engine.VectorFilter) []uint64 {
	type h struct {
		id uint64
		s  float32
	}
	var hs []h
	for _, d := range all {
		if (f.Scope != "" && d.Scope != f.Scope) || (f.Session != "" && d.Session != f.Session) ||
			(!f.From.IsZero() && d.Time.Before(f.From)) || (!f.To.IsZero() && !d.Time.Before(f.To)) {
			continue
		}
		hs = append(hs, h{d.ID, cosine(q, d.Vector)})
	}
	slices.SortFunc(hs, func(a, b h) int {
		if a.s != b.s {
			if a.s > b.s {
				return -1
			}
			return 1
		}
		return int(a.id) - int(b.id)
	})
	var ids []uint64
	for i := 0; i < len(hs) && i < k; i++ {
		ids = append(ids, hs[i].id)
	}
	return ids
}

func ids(hits []engine.VectorHit) []uint64 {
	out := make([]uint64, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func open(t testing.TB, dir string, o *vecfile.Options) *vecfile.Index {
	t.Helper()
	if o == nil {
		o = &vecfile.Options{Dims: dims}
	}
	x, err := vecfile.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// overlap is the share of want found in got.
func overlap(got, want []uint64) float64 {
	n := 0
	for _, id := range want {
		if slices.Contains(got, id) {
			n++
		}
	}
	return float64(n) / float64(max(len(want), 1))
}

func TestSearchExactWithFilters(t *testing.T) {
	x := open(t, t.TempDir(), nil)
	defer x.Close()
	all := map[uint64]engine.VectorDoc{}
	ds := docs(1, 3000)
	for i := 0; i < len(ds); i += 500 {
		if err := x.Apply(ds[i:i+500], nil, uint64(i+500)); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range ds {
		all[d.ID] = d
	}
	// Delete a tenth and replace a tenth.
	var dels []uint64
	var repl []engine.VectorDoc
	for i, d := range docs(2, 3000) {
		switch i % 10 {
		case 3:
			dels = append(dels, d.ID)
			delete(all, d.ID)
		case 5:
			d.Scope = "moved"
			repl = append(repl, d)
			all[d.ID] = d
		}
	}
	if err := x.Apply(repl, dels, 9000); err != nil {
		t.Fatal(err)
	}
	if x.Len() != len(all) || x.Watermark() != 9000 {
		t.Fatalf("len %d watermark %d, want %d 9000", x.Len(), x.Watermark(), len(all))
	}
	filters := []engine.VectorFilter{
		{},
		{Scope: "scope1"},
		{Scope: "moved"},
		{Session: "s42"},
		{Scope: "scope2", From: t0.Add(100 * time.Minute), To: t0.Add(400 * time.Minute)},
		{From: t0.Add(2990 * time.Minute)},
		{To: t0.Add(5 * time.Minute)},
		{Scope: "nobody"},
	}
	for qi, q := range docs(3, 20) {
		for _, f := range filters {
			got, err := x.SearchFilter(q.Vector, 10, f)
			if err != nil {
				t.Fatal(err)
			}
			want := brute(all, q.Vector, 10, f)
			if !slices.Equal(ids(got), want) {
				t.Fatalf("query %d filter %+v: got %v, want %v", qi, f, ids(got), want)
			}
		}
	}
}

func TestReopenAndCrash(t *testing.T) {
	dir := t.TempDir()
	x := open(t, dir, nil)
	ds := docs(1, 1000)
	if err := x.Apply(ds[:600], []uint64{7}, 600); err != nil {
		t.Fatal(err)
	}
	if err := x.Save(); err != nil {
		t.Fatal(err)
	}
	// Applied but not saved: a copy of the files now is what a crash
	// leaves.
	if err := x.Apply(ds[600:], []uint64{8}, 1000); err != nil {
		t.Fatal(err)
	}
	crash := t.TempDir()
	for _, name := range []string{"slots", "matrix"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(crash, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	y := open(t, dir, nil)
	if y.Watermark() != 1000 || y.Len() != 998 {
		t.Fatalf("reopened: watermark %d len %d, want 1000 998", y.Watermark(), y.Len())
	}
	y.Close()
	c := open(t, crash, nil)
	defer c.Close()
	// Rows 601..1000 were written but not saved: the index says it has
	// seen up to 600, the deletion of 8 may or may not have reached the
	// file; replaying from 600 makes it exact.
	if c.Watermark() != 600 {
		t.Fatalf("crash copy: watermark %d, want 600", c.Watermark())
	}
	if err := c.Apply(ds[600:], []uint64{8}, 1000); err != nil {
		t.Fatal(err)
	}
	all := map[uint64]engine.VectorDoc{}
	for _, d := range ds {
		all[d.ID] = d
	}
	delete(all, 7)
	delete(all, 8)
	for _, q := range docs(5, 10) {
		got, _ := c.Search(q.Vector, 10)
		if want := brute(all, q.Vector, 10, engine.VectorFilter{}); !slices.Equal(ids(got), want) {
			t.Fatalf("after replay: got %v, want %v", ids(got), want)
		}
	}
}

func TestDamageIsCorrupt(t *testing.T) {
	cases := []struct {
		name  string
		file  string
		apply func([]byte) []byte
	}{
		{"header scribbled", "slots", func(b []byte) []byte { copy(b[0:], "garbage!"); copy(b[2048:], "garbage!"); return b }},
		{"slot scribbled", "slots", func(b []byte) []byte { b[4096+48*5+3] ^= 0xff; return b }},
		{"vector scribbled", "matrix", func(b []byte) []byte { b[4096+64*9+1] ^= 0x55; return b }},
		{"matrix truncated", "matrix", func(b []byte) []byte { return b[:4096+100] }},
		{"slots truncated", "slots", func(b []byte) []byte { return b[:4096+48*10] }},
		{"matrix header", "matrix", func(b []byte) []byte { b[9] ^= 1; return b }},
		{"empty matrix", "matrix", func(b []byte) []byte { return nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			x := open(t, dir, nil)
			if err := x.Apply(docs(1, 100), nil, 100); err != nil {
				t.Fatal(err)
			}
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, tc.file)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, tc.apply(b), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err = vecfile.Open(dir, &vecfile.Options{Dims: dims})
			if !errors.Is(err, vecfile.ErrCorrupt) {
				t.Fatalf("open: %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestIncompatible(t *testing.T) {
	dir := t.TempDir()
	x := open(t, dir, nil)
	x.Close()
	for _, o := range []vecfile.Options{{Dims: dims + 1}, {Dims: dims, Format: vecfile.Int8}} {
		if _, err := vecfile.Open(dir, &o); !errors.Is(err, vecfile.ErrIncompatible) {
			t.Fatalf("%+v: %v, want ErrIncompatible", o, err)
		}
	}
}

func TestBadInput(t *testing.T) {
	x := open(t, t.TempDir(), nil)
	defer x.Close()
	good := docs(1, 3)
	bad := []engine.VectorDoc{
		{ID: 9, Vector: make([]float32, dims)},
		{ID: 9, Vector: make([]float32, dims-1)},
		{ID: 9, Vector: append(make([]float32, dims-1), float32(math.NaN()))},
	}
	for _, b := range bad {
		if err := x.Apply(append(slices.Clone(good), b), nil, 5); err == nil {
			t.Fatalf("%v accepted", b.Vector)
		}
	}
	if x.Len() != 0 || x.Watermark() != 0 {
		t.Fatal("a refused batch changed the index")
	}
	if _, err := x.Search(good[0].Vector, 0); !errors.Is(err, vecfile.ErrInvalidK) {
		t.Fatalf("k=0: %v", err)
	}
	if _, err := x.Search(good[0].Vector[:3], 1); !errors.Is(err, vecfile.ErrDimension) {
		t.Fatalf("short query: %v", err)
	}
	if hits, err := x.Search(good[0].Vector, 5); err != nil || len(hits) != 0 {
		t.Fatalf("empty index: %v %v", hits, err)
	}
}

// TestDeleteIsGone checks that a deleted vector's bytes leave the files
// at once and its slot after Compact.
func TestDeleteIsGone(t *testing.T) {
	dir := t.TempDir()
	x := open(t, dir, nil)
	ds := docs(1, 200)
	ds[50].Vector[0] = 1234.5 // a recognisable component
	if err := x.Apply(ds, nil, 1); err != nil {
		t.Fatal(err)
	}
	needle := unit(ds[50].Vector)[0]
	has := func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "matrix"))
		for i := 4096; i+4 <= len(b); i += 4 {
			if math.Float32frombits(uint32(b[i])|uint32(b[i+1])<<8|uint32(b[i+2])<<16|uint32(b[i+3])<<24) == needle {
				return true
			}
		}
		return false
	}
	if !has() {
		t.Fatal("the vector is not in the file before the delete")
	}
	if err := x.Apply(nil, []uint64{51}, 2); err != nil {
		t.Fatal(err)
	}
	if has() {
		t.Fatal("deleted vector still in the matrix file")
	}
	if err := x.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if x.Len() != 199 {
		t.Fatalf("len %d after compact", x.Len())
	}
	got, err := x.Search(ds[10].Vector, 1)
	if err != nil || len(got) != 1 || got[0].ID != 11 {
		t.Fatalf("after compact: %v %v", got, err)
	}
	x.Close()
	y := open(t, dir, nil)
	defer y.Close()
	if y.Len() != 199 || y.Watermark() != 2 {
		t.Fatalf("reopened after compact: len %d watermark %d", y.Len(), y.Watermark())
	}
}

// TestAutoCompact deletes past the compaction ratio and checks results
// stay exact across the rewrite and a reopen.
func TestAutoCompact(t *testing.T) {
	dir := t.TempDir()
	x := open(t, dir, nil)
	ds := docs(4, 1000)
	if err := x.Apply(ds, nil, 1); err != nil {
		t.Fatal(err)
	}
	all := map[uint64]engine.VectorDoc{}
	var dels []uint64
	for _, d := range ds {
		if d.ID%2 == 0 {
			dels = append(dels, d.ID)
		} else {
			all[d.ID] = d
		}
	}
	if err := x.Apply(nil, dels, 2); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(filepath.Join(dir, "slots"))
	if want := int64(4096 + 48*500); st.Size() != want {
		t.Fatalf("slots file is %d bytes after compaction, want %d", st.Size(), want)
	}
	// Appends after a compaction grow the new files.
	more := docs(6, 1100)[1000:]
	for _, d := range more {
		all[d.ID] = d
	}
	if err := x.Apply(more, nil, 3); err != nil {
		t.Fatal(err)
	}
	x.Close()
	y := open(t, dir, nil)
	defer y.Close()
	for _, q := range docs(9, 10) {
		got, _ := y.Search(q.Vector, 10)
		if want := brute(all, q.Vector, 10, engine.VectorFilter{}); !slices.Equal(ids(got), want) {
			t.Fatalf("got %v, want %v", ids(got), want)
		}
	}
}

// TestInt8Recall measures the int8 format against the exact float32 scan,
// with dims that are and are not multiples of the kernel's 16.
func TestInt8Recall(t *testing.T) {
	const n = 20000
	for _, d := range []int{16, 37, 100} {
		f := open(t, t.TempDir(), &vecfile.Options{Dims: d, Scan: vecfile.ScanFloat32})
		q8 := open(t, t.TempDir(), &vecfile.Options{Dims: d, Format: vecfile.Int8})
		ds := docsDims(11, n, d)
		for _, x := range []*vecfile.Index{f, q8} {
			if err := x.Apply(ds, nil, 1); err != nil {
				t.Fatal(err)
			}
		}
		var sum float64
		qs := docsDims(12, 100, d)
		for _, q := range qs {
			want, _ := f.Search(q.Vector, 10)
			got, _ := q8.Search(q.Vector, 10)
			sum += overlap(ids(got), ids(want))
		}
		recall := sum / float64(len(qs))
		t.Logf("int8 recall@10 vs float32 over %d %d-d vectors: %.3f", n, d, recall)
		if recall < 0.95 {
			t.Fatalf("%d dims: int8 recall@10 %.3f < 0.95", d, recall)
		}
		f.Close()
		q8.Close()
	}
}

// TestConcurrent runs searches while batches are applied, saved and
// compacted (go test -race).
func TestConcurrent(t *testing.T) {
	x := open(t, t.TempDir(), nil)
	defer x.Close()
	ds := docs(1, 40000)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := x.SearchFilter(ds[i%100].Vector, 10, engine.VectorFilter{Scope: "scope1"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := 0; i < len(ds); i += 2000 {
		var dels []uint64
		for id := uint64(i / 2); id < uint64(i/2+600); id++ {
			dels = append(dels, id)
		}
		if err := x.Apply(ds[i:i+2000], dels, uint64(i)); err != nil {
			t.Fatal(err)
		}
		if err := x.Save(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}

func TestSearchAfterRangeAfterLive(t *testing.T) {
	x := open(t, t.TempDir(), nil)
	defer x.Close()
	ds := docs(1, 500)
	if err := x.Apply(ds, []uint64{450}, 1); err != nil {
		t.Fatal(err)
	}
	tail := map[uint64]engine.VectorDoc{}
	for _, d := range ds[400:] {
		if d.ID != 450 {
			tail[d.ID] = d
		}
	}
	for _, q := range docs(2, 5) {
		got, err := x.SearchAfter(q.Vector, 10, 400)
		if err != nil {
			t.Fatal(err)
		}
		if want := brute(tail, q.Vector, 10, engine.VectorFilter{}); !slices.Equal(ids(got), want) {
			t.Fatalf("SearchAfter: %v, want %v", ids(got), want)
		}
	}
	var seen []uint64
	x.RangeAfter(400, func(id uint64, _ []float32) bool { seen = append(seen, id); return true })
	if len(seen) != 99 || seen[0] != 401 || slices.Contains(seen, 450) {
		t.Fatalf("RangeAfter(400) saw %d ids from %d", len(seen), seen[0])
	}
	if !x.Live(1) || x.Live(450) || x.Live(501) {
		t.Fatal("Live is wrong")
	}
}

// TestCloseTrims checks that the files hold their rows only after Close.
func TestCloseTrims(t *testing.T) {
	dir := t.TempDir()
	x := open(t, dir, nil)
	if err := x.Apply(docs(1, 1000), nil, 1); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"slots": 4096 + 48*1000, "matrix": 4096 + 4*dims*1000} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Size() != want {
			t.Fatalf("%s: %v bytes (%v), want %d", name, st.Size(), err, want)
		}
	}
	y := open(t, dir, nil)
	defer y.Close()
	if y.Len() != 1000 {
		t.Fatalf("reopened: %d rows", y.Len())
	}
	if err := y.Apply(docs(2, 1100)[1000:], nil, 2); err != nil {
		t.Fatal(err)
	}
}

// TestReadOnly: a read-only index answers from the files, refuses
// changes and writes nothing; a missing one is empty.
func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	x := open(t, dir, nil)
	ds := docs(1, 100)
	if err := x.Apply(ds, nil, 7); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	stat := func() string {
		var s string
		for _, n := range []string{"slots", "matrix"} {
			fi, err := os.Stat(filepath.Join(dir, n))
			if err != nil {
				t.Fatal(err)
			}
			s += fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
		}
		return s
	}
	before := stat()
	ro := open(t, dir, &vecfile.Options{Dims: dims, ReadOnly: true})
	if ro.Len() != 100 || ro.Watermark() != 7 {
		t.Fatalf("read-only: len %d watermark %d", ro.Len(), ro.Watermark())
	}
	if got, err := ro.Search(ds[3].Vector, 1); err != nil || len(got) != 1 || got[0].ID != 4 {
		t.Fatalf("read-only search: %v %v", got, err)
	}
	if err := ro.Apply(docs(2, 1), nil, 8); !errors.Is(err, vecfile.ErrReadOnly) {
		t.Fatalf("Apply: %v, want ErrReadOnly", err)
	}
	if err := ro.Compact(context.Background()); !errors.Is(err, vecfile.ErrReadOnly) {
		t.Fatalf("Compact: %v, want ErrReadOnly", err)
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if after := stat(); after != before {
		t.Fatal("a read-only index changed its files")
	}
	missing := filepath.Join(t.TempDir(), "none")
	empty := open(t, missing, &vecfile.Options{Dims: dims, ReadOnly: true})
	defer empty.Close()
	if empty.Len() != 0 || empty.Watermark() != 0 {
		t.Fatal("missing read-only index is not empty")
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a read-only open created %s", missing)
	}
}
