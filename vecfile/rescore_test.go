package vecfile_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/vecscan"
	"github.com/hmo-dev/hmo/vecfile"
)

// rescored is what the engine does with an Int8Rescore index's
// candidates: each scored exactly from the caller's copy of its vector,
// normalised as a Float32 index normalises a row (times the float64
// inverse of the norm) against the query normalised as the index
// normalises a query (over the norm), the best k kept, ties to the lower
// id.
func rescored(cands []engine.VectorHit, q []float32, vecs map[uint64][]float32, k int) []engine.VectorHit {
	norm := func(v []float32) float64 {
		var s float64
		for _, c := range v {
			s += float64(c) * float64(c)
		}
		return math.Sqrt(s)
	}
	n := norm(q)
	uq := make([]float32, len(q))
	for i, c := range q {
		uq[i] = float32(float64(c) / n)
	}
	var out []engine.VectorHit
	for _, h := range cands {
		v := vecs[h.ID]
		inv := 1 / norm(v)
		u := make([]float32, len(v))
		for i, c := range v {
			u[i] = float32(float64(c) * inv)
		}
		out = append(out, engine.VectorHit{ID: h.ID, Score: vecscan.Dot(uq, u)})
	}
	slices.SortFunc(out, func(a, b engine.VectorHit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return int(a.ID) - int(b.ID)
	})
	return out[:min(k, len(out))]
}

// TestInt8RescoreMatchesScanInt8 checks that an Int8Rescore index's
// candidates, rescored from the caller's float32 vectors, are hit for hit
// (ids and float32 scores) what a Float32 index scanned with ScanInt8
// returns, with filters, deletions, replacements, SearchAfter, after a
// reopen and a compaction; that the scores it returns itself are close to
// the exact ones; and that it keeps no float32 matrix: its matrix holds
// compStride bytes a row and there is no companion file.
func TestInt8RescoreMatchesScanInt8(t *testing.T) {
	for _, d := range []int{1, 3, 16, 37, 100} {
		t.Run(fmt.Sprint(d, "dims"), func(t *testing.T) {
			f := open(t, t.TempDir(), &vecfile.Options{Dims: d})
			defer f.Close()
			dir := t.TempDir()
			opts := &vecfile.Options{Dims: d, Format: vecfile.Int8Rescore}
			r := open(t, dir, opts)
			ds := docsDims(1, 3000, d)
			repl := docsDims(2, 100, d)
			for i := range repl {
				repl[i].ID = uint64(2*i + 1)
			}
			dels := []uint64{4, 10, 2999}
			vecs := map[uint64][]float32{}
			for _, dd := range slices.Concat(ds, repl) {
				vecs[dd.ID] = dd.Vector
			}
			for _, id := range dels {
				delete(vecs, id)
			}
			for _, x := range []*vecfile.Index{f, r} {
				mustApply(t, x, ds, nil, 1)
				mustApply(t, x, repl, dels, 2)
			}
			if got := f.RescoreCandidates(10); got != 0 {
				t.Fatalf("a Float32 index asks to rescore %d candidates", got)
			}
			if got, want := r.RescoreCandidates(10), max(vecfile.DefaultRescore*10, vecfile.RescoreMin); got != want {
				t.Fatalf("RescoreCandidates(10) = %d, want %d", got, want)
			}
			filters := []engine.VectorFilter{
				{}, {Scope: "scope1"}, {Session: "s7"},
				{From: t0.Add(100 * time.Minute), To: t0.Add(900 * time.Minute)},
			}
			check := func(label string) {
				t.Helper()
				for i, q := range docsDims(3, 30, d) {
					fl := filters[i%len(filters)]
					for _, k := range []int{1, 10, 40} {
						want, err := f.SearchFilter(q.Vector, k, fl)
						if err != nil {
							t.Fatal(err)
						}
						cands, err := r.SearchFilter(q.Vector, r.RescoreCandidates(k), fl)
						if err != nil {
							t.Fatal(err)
						}
						sameHits(t, fmt.Sprint(label, " query ", i, " k ", k, fl), rescored(cands, q.Vector, vecs, k), want)
						for _, h := range cands {
							if _, ok := vecs[h.ID]; !ok {
								t.Fatalf("%s: deleted id %d is a candidate", label, h.ID)
							}
							if exact := cosine(q.Vector, vecs[h.ID]); math.Abs(float64(exact-h.Score)) > 0.05 {
								t.Fatalf("%s: id %d int8 score %v, exact %v", label, h.ID, h.Score, exact)
							}
						}
					}
					wa, _ := f.SearchAfter(q.Vector, 5, 2500)
					ca, _ := r.SearchAfter(q.Vector, r.RescoreCandidates(5), 2500)
					sameHits(t, label+" after", rescored(ca, q.Vector, vecs, 5), wa)
				}
			}
			check("applied")
			mustClose(t, r)
			r = open(t, dir, opts)
			defer func() { r.Close() }()
			check("reopened")
			if err := r.Compact(t.Context()); err != nil {
				t.Fatal(err)
			}
			check("compacted")
			if _, err := os.Stat(filepath.Join(dir, "int8")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("an Int8Rescore index keeps a companion file (%v)", err)
			}
			mustClose(t, r)
			st, err := os.Stat(filepath.Join(dir, "matrix"))
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(4096 + len(vecs)*((d+12+15)&^15)); st.Size() != want {
				t.Fatalf("matrix is %d bytes, want %d (int8 rows of %d live vectors)", st.Size(), want, len(vecs))
			}
			r = open(t, dir, opts)
			if v, ok, err := r.Vector(1); v != nil || ok || err != nil || r.KeepsVectors() {
				t.Fatalf("an Int8Rescore index returns a vector: %v %v %v", v, ok, err)
			}
			n := 0
			err = r.Range(func(id uint64, v []float32) bool {
				n++
				if c := cosine(v, vecs[id]); d >= 16 && c < 0.99 {
					t.Fatalf("Range: id %d approximates its vector at cosine %v", id, c)
				}
				return true
			})
			if err != nil || n != len(vecs) {
				t.Fatalf("Range: %d rows, %v; want %d", n, err, len(vecs))
			}
		})
	}
}

// TestKeepFormat checks that Options.KeepFormat opens an index in the
// format it was made with, answering as before, and applies Format to a
// new index only; that without it another format is ErrIncompatible.
func TestKeepFormat(t *testing.T) {
	ds := docsDims(5, 500, 100)
	q := docsDims(6, 1, 100)[0].Vector
	for _, made := range []vecfile.Format{vecfile.Float32, vecfile.Int8, vecfile.Int8Rescore} {
		t.Run(made.String(), func(t *testing.T) {
			dir := t.TempDir()
			x := open(t, dir, &vecfile.Options{Dims: 100, Format: made})
			mustApply(t, x, ds, nil, 1)
			want, err := x.Search(q, 10)
			if err != nil {
				t.Fatal(err)
			}
			wantKeeps, wantCands := x.KeepsVectors(), x.RescoreCandidates(10)
			mustClose(t, x)
			for _, other := range []vecfile.Format{vecfile.Float32, vecfile.Int8, vecfile.Int8Rescore} {
				if other == made {
					continue
				}
				if _, err := vecfile.Open(dir, &vecfile.Options{Dims: 100, Format: other}); !errors.Is(err, vecfile.ErrIncompatible) {
					t.Fatalf("opened as %s without KeepFormat: %v", other, err)
				}
				for _, ro := range []bool{false, true} {
					x := open(t, dir, &vecfile.Options{Dims: 100, Format: other, KeepFormat: true, ReadOnly: ro})
					got, err := x.Search(q, 10)
					if err != nil {
						t.Fatal(err)
					}
					sameHits(t, fmt.Sprint("kept as ", other, " read-only ", ro), got, want)
					if x.KeepsVectors() != wantKeeps || x.RescoreCandidates(10) != wantCands {
						t.Fatalf("kept as %s: KeepsVectors %v RescoreCandidates %d, want %v %d",
							other, x.KeepsVectors(), x.RescoreCandidates(10), wantKeeps, wantCands)
					}
					mustClose(t, x)
				}
			}
			// A new index takes Format.
			nx := open(t, t.TempDir(), &vecfile.Options{Dims: 100, Format: vecfile.Int8Rescore, KeepFormat: true})
			defer nx.Close()
			if nx.KeepsVectors() || nx.RescoreCandidates(1) == 0 {
				t.Fatal("a new index with KeepFormat is not Int8Rescore")
			}
		})
	}
}

// TestInt8RescoreErrBound checks that every hit of an Int8Rescore search
// carries a bound (Err) on the distance of its int8 score from the exact
// cosine, and that the bound holds: on random vectors, and on vectors
// whose components all round by half a step against a query that adds
// every rounding up (the bound's worst case); and that a Float32 index's
// exact hits carry none.
func TestInt8RescoreErrBound(t *testing.T) {
	for _, d := range []int{1, 3, 16, 37, 100} {
		t.Run(fmt.Sprint(d, "dims"), func(t *testing.T) {
			x := open(t, t.TempDir(), &vecfile.Options{Dims: d, Format: vecfile.Int8Rescore})
			defer x.Close()
			f := open(t, t.TempDir(), &vecfile.Options{Dims: d, Format: vecfile.Float32, Scan: vecfile.ScanFloat32})
			defer f.Close()
			ds := docsDims(1, 150, d) // with the 50 below, every row is a hit
			// Worst case: one component 127 steps, the others just above
			// 0.5 or 1.5 steps (each rounds up by about half a step), and
			// queries along those components.
			for i := range 50 {
				v := make([]float32, d)
				v[0] = 127
				for j := 1; j < d; j++ {
					v[j] = 0.502 + float32((i+j)%2)
				}
				ds = append(ds, engine.VectorDoc{ID: uint64(10000 + i), Vector: v, Time: t0})
			}
			vecs := map[uint64][]float32{}
			for _, dd := range ds {
				vecs[dd.ID] = dd.Vector
			}
			mustApply(t, x, ds, nil, 1)
			mustApply(t, f, ds, nil, 1)
			qs := docsDims(2, 20, d)
			for i := range 5 {
				v := make([]float32, d)
				v[0] = float32(i+1) / 10
				for j := 1; j < d; j++ {
					v[j] = 1
				}
				qs = append(qs, engine.VectorDoc{Vector: v})
			}
			worst := 0.0 // the largest error seen, as a share of its bound
			for i, q := range qs {
				hits, err := x.Search(q.Vector, 200)
				if err != nil {
					t.Fatal(err)
				}
				exact := rescored(hits, q.Vector, vecs, len(hits))
				score := map[uint64]float32{}
				for _, h := range exact {
					score[h.ID] = h.Score
				}
				for _, h := range hits {
					if !(h.Err > 0) || h.Err > 0.2 {
						t.Fatalf("query %d id %d: Err %v", i, h.ID, h.Err)
					}
					e := math.Abs(float64(score[h.ID]) - float64(h.Score))
					if e > float64(h.Err) {
						t.Fatalf("query %d id %d: int8 score %v, exact %v: error %g above its bound %g", i, h.ID, h.Score, score[h.ID], e, h.Err)
					}
					worst = max(worst, e/float64(h.Err))
				}
				fh, err := f.Search(q.Vector, 10)
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range fh {
					if h.Err != 0 {
						t.Fatalf("a Float32 index's hit has Err %v", h.Err)
					}
				}
			}
			if d >= 16 && worst < 0.5 {
				t.Errorf("the worst case reached %.2f of its bound: the test does not reach it", worst)
			}
		})
	}
}
