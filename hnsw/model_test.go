package hnsw_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/hnsw"
)

// TestAgainstModel applies random batches of adds, replaces and deletes,
// reopening the index now and then, and compares every search with a
// brute-force model: identical on the exact path; on the graph path only
// live ids with their true scores, best first, and high recall.
func TestAgainstModel(t *testing.T) {
	t.Parallel()
	const dims, ids, steps = 8, 300, 250
	for _, p := range paths {
		for seed := int64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", p.name, seed), func(t *testing.T) {
				r := rand.New(rand.NewSource(seed))
				d := newDataset(seed, dims, 4)
				opts := p.opts
				opts.Dims, opts.CompactRatio = dims, 0.3
				dir := t.TempDir()
				x, err := hnsw.Open(dir, &opts)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { x.Close() }()
				ref := model{}
				var sumRecall float64
				var searches int
				for step := 1; step <= steps; step++ {
					adds, dels := randomBatch(r, d, ids)
					mustApply(t, x, adds, dels, uint64(step))
					for _, a := range adds {
						ref[a.ID] = a.Vector
					}
					for _, id := range dels {
						delete(ref, id)
					}
					if got := x.Len(); got != len(ref) {
						t.Fatalf("step %d: Len = %d, want %d", step, got, len(ref))
					}
					if step%100 == 0 {
						if err := x.Close(); err != nil {
							t.Fatalf("Close: %v", err)
						}
						if x, err = hnsw.Open(dir, &opts); err != nil {
							t.Fatalf("reopen: %v", err)
						}
						if got := x.Watermark(); got != uint64(step) {
							t.Fatalf("reopened Watermark = %d, want %d", got, step)
						}
					}
					q := d.point()
					got, want := mustSearch(t, x, q, 10), ref.search(q, 10)
					checkHits(t, step, q, got, want, ref, p.name == "exact")
					sumRecall += recall(got, want)
					searches++
				}
				avg := sumRecall / float64(searches)
				t.Logf("mean recall@10 %.3f over %d searches", avg, searches)
				if avg < 0.95 {
					t.Errorf("mean recall %.3f, want >= 0.95", avg)
				}
			})
		}
	}
}

// randomBatch returns up to 8 operations on ids below n: adds of new or
// present ids (replaces) and deletes of any id.
func randomBatch(r *rand.Rand, d *dataset, n int) ([]engine.VectorDoc, []uint64) {
	var adds []engine.VectorDoc
	var dels []uint64
	for range r.Intn(9) {
		id := uint64(r.Intn(n))
		if r.Intn(3) == 0 {
			dels = append(dels, id)
		} else {
			adds = append(adds, engine.VectorDoc{ID: id, Vector: d.point()})
		}
	}
	return adds, dels
}

// checkHits compares the result of searching q with the model's.
func checkHits(t *testing.T, step int, q []float32, got, want []engine.VectorHit, ref model, exact bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("step %d: %d hits, want %d", step, len(got), len(want))
	}
	for i, h := range got {
		if exact && h.ID != want[i].ID {
			t.Fatalf("step %d: hit %d = %d, want %d", step, i, h.ID, want[i].ID)
		}
		v, live := ref[h.ID]
		if !live {
			t.Fatalf("step %d: hit %d is deleted id %d", step, i, h.ID)
		}
		var s float64
		for j := range v {
			s += float64(q[j]) * float64(v[j])
		}
		if math.Abs(float64(h.Score)-s) > 1e-5 {
			t.Fatalf("step %d: id %d score %v, want %v", step, h.ID, h.Score, s)
		}
		if i > 0 && h.Score > got[i-1].Score {
			t.Fatalf("step %d: hits not best first: %v", step, got)
		}
	}
}
