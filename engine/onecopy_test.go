package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/vecfile"
)

// TestOneFloat32Copy checks a store whose vector file keeps int8 rows
// only (vecfile.Int8Rescore, the engine rescoring from bbolt) against one
// whose file keeps float32 rows and their int8 companion (an older
// store): the same recall results hit for hit (ids, scores, relevance,
// z-scores: the null sample is the same) and the same nearest vectors,
// flat and tiered, with and without filters, after forgets, updates and
// more records; and that the int8 store's vector file has no float32 rows
// on disk.
func TestOneFloat32Copy(t *testing.T) {
	for _, mode := range []engine.Mode{engine.ModeFlat, engine.ModeTiered} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			open := func(format vecfile.Format) (*engine.Engine, string) {
				o := testOptions(&fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
				o.Mode = mode
				o.OpenVectorIndex = func(dir string, dims int) (engine.VectorIndex, error) {
					return vecfile.Open(dir, &vecfile.Options{Dims: dims, Format: format})
				}
				dir := t.TempDir()
				e, err := engine.Open(dir, o)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { e.Close() })
				return e, dir
			}
			emb := testOptions(&fakeClock{}).Embedder
			old, _ := open(vecfile.Float32)
			one, oneDir := open(vecfile.Int8Rescore)
			ctx := context.Background()
			queries := []engine.Query{
				{Text: "topic3 item5", K: 8}, {Text: "note about topic7", K: 8}, {Text: "item16", K: 20},
				{Text: "topic3 item5", K: 8, Scope: "scope1"}, {Text: "note topic2", K: 5, Session: "s4"},
			}
			compare := func(label string) {
				t.Helper()
				for _, q := range queries {
					a, err := old.Recall(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					b, err := one.Recall(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					if len(a) != len(b) || len(a) == 0 {
						t.Fatalf("%s %+v: %d and %d results", label, q, len(a), len(b))
					}
					for i := range a {
						x, y := a[i], b[i]
						if x.Record.ID != y.Record.ID || x.Score != y.Score || x.Relevance != y.Relevance || x.VectorZ != y.VectorZ {
							t.Errorf("%s %+v #%d: float32 rows %d score %v relevance %v z %v; int8 rows %d %v %v %v", label, q, i,
								x.Record.ID, x.Score, x.Relevance, x.VectorZ, y.Record.ID, y.Score, y.Relevance, y.VectorZ)
						}
					}
				}
				for _, text := range []string{"topic3 item5", "item16", "note 42"} {
					qvs, err := emb.Embed(ctx, []string{text})
					if err != nil {
						t.Fatal(err)
					}
					qv := qvs[0]
					for _, k := range []int{1, 10, 100} {
						a, err := old.NearestVectors(qv, k)
						if err != nil {
							t.Fatal(err)
						}
						b, err := one.NearestVectors(qv, k)
						if err != nil {
							t.Fatal(err)
						}
						if !slices.Equal(a, b) || len(a) != k {
							t.Fatalf("%s %q k %d: nearest vectors %v, float32 rows %v", label, text, k, b, a)
						}
					}
				}
			}
			sameHistory(t, []*engine.Engine{old, one}, 3, compare)
			if err := one.Close(); err != nil {
				t.Fatal(err)
			}
			vd := filepath.Join(oneDir, engine.VectorDir)
			if _, err := os.Stat(filepath.Join(vd, "int8")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the int8 store keeps a companion file (%v)", err)
			}
			st, err := os.Stat(filepath.Join(vd, "matrix"))
			if err != nil {
				t.Fatal(err)
			}
			if dims := emb.Dims(); st.Size() >= int64(4096+700*4*dims) {
				t.Fatalf("the int8 store's matrix is %d bytes: float32 rows", st.Size())
			}
		})
	}
}

// staleIndex is a vector index whose searches also return ids it no
// longer holds, best first: what a search sees when the records are
// forgotten between its scan and the rescoring.
type staleIndex struct {
	*vecfile.Index
	stale *[]uint64 // set before the searches, read-only during them
}

func (s staleIndex) Search(q []float32, k int) ([]engine.VectorHit, error) {
	hits, err := s.Index.Search(q, k)
	var out []engine.VectorHit
	for _, id := range *s.stale {
		out = append(out, engine.VectorHit{ID: id, Score: 1})
	}
	return append(out, hits...), err
}

// TestRescoreSkipsGone checks that candidates whose records are gone
// when they are rescored (forgotten, or never stored) are dropped: no
// error, no panic, and the rest ranked as without them; and that
// searches racing forgets and updates never fail.
func TestRescoreSkipsGone(t *testing.T) {
	ctx := context.Background()
	var stale []uint64
	o := testOptions(&fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
	o.Mode = engine.ModeFlat
	o.OpenVectorIndex = func(dir string, dims int) (engine.VectorIndex, error) {
		x, err := vecfile.Open(dir, &vecfile.Options{Dims: dims, Format: vecfile.Int8Rescore})
		return staleIndex{x, &stale}, err
	}
	e, err := engine.Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var ins []engine.Input
	for i := range 300 {
		ins = append(ins, engine.Input{Session: fmt.Sprint("s", i/25), Text: fmt.Sprintf("note %d on topic%d", i, i%13)})
	}
	if _, err := e.RememberBatch(ctx, engine.Batch{Inputs: ins}); err != nil {
		t.Fatal(err)
	}
	qvs, err := o.Embedder.Embed(ctx, []string{"topic4 note"})
	if err != nil {
		t.Fatal(err)
	}
	qv := qvs[0]
	want, err := e.NearestVectors(qv, 10)
	if err != nil || len(want) != 10 {
		t.Fatalf("nearest: %v %v", want, err)
	}
	if err := e.Forget(ctx, want[0].ID); err != nil {
		t.Fatal(err)
	}
	// The index answers the forgotten id and one never stored, first.
	stale = append(stale, want[0].ID, 1<<40)
	got, err := e.NearestVectors(qv, 9)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want[1:]) {
		t.Fatalf("with gone candidates: %v, want %v", got, want[1:])
	}
	if _, err := e.Recall(ctx, engine.Query{Text: "topic4 note", K: 5}); err != nil {
		t.Fatal(err)
	}
	// Searches racing writers that forget and replace records.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := uint64(2); i < 60; i += 3 {
			if err := e.Forget(ctx, i); err != nil {
				errs <- err
			}
			if _, err := e.Update(ctx, i+1, fmt.Sprint("topic4 replaced ", i)); err != nil {
				errs <- err
			}
		}
	}()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 40 {
				if _, err := e.NearestVectors(qv, 10); err != nil {
					errs <- err
				}
				if _, err := e.Recall(ctx, engine.Query{Text: "topic4 note", K: 5}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// boundIndex is a vector index whose searches lower the scores of the
// better half of their hits by drop and give them the bound err (the
// file's own hits when err is negative).
type boundIndex struct {
	*vecfile.Index
	drop, err float32
}

func (b boundIndex) Search(q []float32, k int) ([]engine.VectorHit, error) {
	hits, err := b.Index.Search(q, k)
	if b.err < 0 {
		return hits, err // the file's own bounds
	}
	for i := range len(hits) / 2 {
		hits[i].Score -= b.drop
		hits[i].Err = b.err
	}
	return hits, err
}

// TestRescoreBound checks how the rescoring uses the candidates' bounds
// (VectorHit.Err): a candidate whose index score plus bound falls below
// the k-th best exact score of the k best candidates is not read, and
// one with no bound (0) or a bound that does not rule it out is; and
// that with the vector file's own bounds the nearest vectors are those
// of a search that reads every candidate.
func TestRescoreBound(t *testing.T) {
	ctx := context.Background()
	var ix *vecfile.Index
	bound := boundIndex{}
	o := testOptions(&fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
	o.Mode = engine.ModeFlat
	o.OpenVectorIndex = func(dir string, dims int) (engine.VectorIndex, error) {
		x, err := vecfile.Open(dir, &vecfile.Options{Dims: dims, Format: vecfile.Int8Rescore})
		ix, bound.Index = x, x
		return &bound, err
	}
	e, err := engine.Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var ins []engine.Input
	for i := range 600 {
		ins = append(ins, engine.Input{Session: fmt.Sprint("s", i/25), Text: fmt.Sprintf("note %d on topic%d item%d", i, i%13, i%7)})
	}
	if _, err := e.RememberBatch(ctx, engine.Batch{Inputs: ins}); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"topic4 note", "item3 on topic9", "note 42"} {
		qvs, err := o.Embedder.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		qv := qvs[0]
		const k = 20
		nearest := func(drop, err float32) []engine.VectorHit {
			bound.drop, bound.err = drop, err
			got, e := e.NearestVectors(qv, k)
			if e != nil || len(got) != k {
				t.Fatalf("%q: %d nearest, %v", text, len(got), e)
			}
			return got
		}
		// Every candidate read: the vector file's bounds, or none.
		all := nearest(0, 0)
		if got := nearest(0, -1); !slices.Equal(got, all) {
			t.Fatalf("%q: with the file's bounds %v, reading every candidate %v", text, got, all)
		}
		cands, err := ix.Search(qv, ix.RescoreCandidates(k))
		if err != nil {
			t.Fatal(err)
		}
		better := map[uint64]bool{}
		for _, h := range cands[:len(cands)/2] {
			better[h.ID] = true
		}
		inBetter := func(hs []engine.VectorHit) (n int) {
			for _, h := range hs {
				if better[h.ID] {
					n++
				}
			}
			return n
		}
		if inBetter(all) == 0 {
			t.Fatalf("%q: no nearest vector among the better half of the candidates: the test cannot tell", text)
		}
		// The better half lowered below every exact score, so that the
		// worse half is read first: read when unbounded or bounded
		// loosely, not when their bound rules them out.
		if got := nearest(3, 0); !slices.Equal(got, all) {
			t.Fatalf("%q: unbounded candidates not read: %v, want %v", text, got, all)
		}
		if got := nearest(3, 3.5); !slices.Equal(got, all) {
			t.Fatalf("%q: candidates within their bound not read: %v, want %v", text, got, all)
		}
		if got := nearest(3, 1e-3); inBetter(got) != 0 {
			t.Fatalf("%q: candidates ruled out by their bound read: %v", text, got)
		}
	}
}

// rigIndex is a vector index whose searches hand their hits to rig, when
// set, and return what it makes of them: scores and bounds made up
// around the true candidates.
type rigIndex struct {
	*vecfile.Index
	rig func([]engine.VectorHit) []engine.VectorHit
}

func (r *rigIndex) Search(q []float32, k int) ([]engine.VectorHit, error) {
	hits, err := r.Index.Search(q, k)
	if err != nil || r.rig == nil {
		return hits, err
	}
	return r.rig(hits), nil
}

// rigEngine opens a flat engine over a rigIndex of int8 rows holding n
// notes; it is closed with the test.
func rigEngine(t *testing.T, n int) (*engine.Engine, *rigIndex, *engine.Options) {
	t.Helper()
	rig := &rigIndex{}
	o := testOptions(&fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
	o.Mode = engine.ModeFlat
	o.OpenVectorIndex = func(dir string, dims int) (engine.VectorIndex, error) {
		x, err := vecfile.Open(dir, &vecfile.Options{Dims: dims, Format: vecfile.Int8Rescore})
		rig.Index = x
		return rig, err
	}
	e, err := engine.Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	var ins []engine.Input
	for i := range n {
		ins = append(ins, engine.Input{Session: fmt.Sprint("s", i/25), Text: fmt.Sprintf("note %d on topic%d item%d", i, i%13, i%7)})
	}
	if _, err := e.RememberBatch(context.Background(), engine.Batch{Inputs: ins}); err != nil {
		t.Fatal(err)
	}
	return e, rig, o
}

// TestRescoreBoundRises checks that the rescoring rules a candidate out
// against the k-th best exact score read so far, not only against the
// k-th of the index's k best: candidates read after the k first raise
// it. The index's k best are made the k worst by their exact scores,
// the next k the best but one, then the best of all with a bound that
// the risen k-th rules out and the first k's k-th does not (made up: its
// exact score is far above it, so that reading it would show). It is
// not read; with a bound that the risen k-th does not rule out, it is.
func TestRescoreBoundRises(t *testing.T) {
	ctx := context.Background()
	const n = 600
	e, rig, o := rigEngine(t, n)
	for _, text := range []string{"topic4 note", "item3 on topic9", "topic11 item2"} {
		qvs, err := o.Embedder.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		qv := qvs[0]
		// Every record's exact score: every candidate read.
		rig.rig = func(hs []engine.VectorHit) []engine.VectorHit {
			for i := range hs {
				hs[i].Err = 0
			}
			return hs
		}
		all, err := e.NearestVectors(qv, n)
		if err != nil || len(all) != n {
			t.Fatalf("%q: %d of %d exact scores, %v", text, len(all), n, err)
		}
		exact := map[uint64]float32{}
		for _, h := range all {
			exact[h.ID] = h.Score
		}
		const k = 5
		for _, risen := range []bool{true, false} {
			var c []uint64 // the candidates, best first by their exact scores
			rig.rig = func(hs []engine.VectorHit) []engine.VectorHit {
				c = c[:0]
				for _, h := range hs {
					c = append(c, h.ID)
				}
				slices.SortFunc(c, func(a, b uint64) int {
					if exact[a] != exact[b] {
						if exact[a] > exact[b] {
							return -1
						}
						return 1
					}
					return int(a - b)
				})
				m := len(c)
				lo, hi := exact[c[m-1]], exact[c[k]] // the first k's k-th, the risen k-th
				if !(hi-lo > 1e-3) || exact[c[0]]-hi < 1e-3 {
					t.Fatalf("%q: exact scores too close to tell (%v, %v, %v)", text, lo, hi, exact[c[0]])
				}
				var out []engine.VectorHit
				for i, id := range c[m-k:] { // the worst k first, unbounded
					out = append(out, engine.VectorHit{ID: id, Score: 3 - float32(i)/1000})
				}
				for i, id := range c[1 : k+1] { // then the best but one, unbounded
					out = append(out, engine.VectorHit{ID: id, Score: 2 - float32(i)/1000})
				}
				s := (lo + hi) / 2
				best := engine.VectorHit{ID: c[0], Score: s, Err: 1e-6} // below hi, above lo
				if !risen {
					best.Err = hi - s + 1e-3 // above both
				}
				out = append(out, best)
				for _, id := range c[k+1 : m-k] { // the rest, ruled out by both
					out = append(out, engine.VectorHit{ID: id, Score: lo - 1, Err: 1e-6})
				}
				return out
			}
			got, err := e.NearestVectors(qv, k)
			if err != nil || len(got) != k {
				t.Fatalf("%q: %d nearest, %v", text, len(got), err)
			}
			want := c[1 : k+1]
			if !risen {
				want = c[:k]
			}
			for i, h := range got {
				if h.ID != want[i] || h.Score != exact[h.ID] {
					t.Fatalf("%q (risen %v): nearest %v, want the ids %v with their exact scores", text, risen, got, want)
				}
			}
		}
	}
}

// TestRescoreDuplicateHits checks that an index answer naming ids more
// than once (the same hit again), or not best first, is rescored as the
// answer with each id once, best first.
func TestRescoreDuplicateHits(t *testing.T) {
	ctx := context.Background()
	e, rig, o := rigEngine(t, 300)
	qvs, err := o.Embedder.Embed(ctx, []string{"item3 on topic9"})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 10, 40} {
		rig.rig = nil
		want, err := e.NearestVectors(qvs[0], k)
		if err != nil || len(want) != k {
			t.Fatalf("k %d: %d nearest, %v", k, len(want), err)
		}
		for name, f := range map[string]func([]engine.VectorHit) []engine.VectorHit{
			"each twice": func(hs []engine.VectorHit) []engine.VectorHit {
				return append(slices.Clone(hs), hs...)
			},
			"worst first": func(hs []engine.VectorHit) []engine.VectorHit {
				slices.Reverse(hs)
				return hs
			},
			"worst first, the best twice": func(hs []engine.VectorHit) []engine.VectorHit {
				hs = append(hs, hs[0])
				slices.Reverse(hs)
				return hs
			},
		} {
			rig.rig = f
			got, err := e.NearestVectors(qvs[0], k)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("k %d, %s: %v, %v; want %v", k, name, got, err, want)
			}
		}
	}
}
