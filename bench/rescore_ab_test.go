package bench_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/hnsw"
)

// noBounds is the store's vector index with a switch that drops the
// bounds (engine.VectorHit.Err) of its hits: the rescoring then reads
// every candidate, as before the bounds.
type noBounds struct {
	*hnsw.Accelerated
	off *atomic.Bool
}

func (n noBounds) Search(q []float32, k int) ([]engine.VectorHit, error) {
	hits, err := n.Accelerated.Search(q, k)
	if n.off.Load() {
		for i := range hits {
			hits[i].Err = 0
		}
	}
	return hits, err
}

// TestRescoreBoundAB measures, in one process, the CPU of the scale
// bench's workload queries (flat, K 10) with the rescoring's bounds and
// without them: HMO_AB_STORE is a copy of a scale store, HMO_AB_SIDE
// "hybrid" (default) or "vector", HMO_AB_ROUNDS the passes over the 200
// queries (default 6). Each pass asks every query once, in blocks of 10
// that alternate between the two ways, and the next pass swaps them. It
// prints the median CPU a query of each way, per two passes, and checks
// that both return the same results. Skipped without HMO_AB_STORE.
func TestRescoreBoundAB(t *testing.T) {
	dir := os.Getenv("HMO_AB_STORE")
	if dir == "" {
		t.Skip("HMO_AB_STORE not set")
	}
	rounds := 6
	if v, err := strconv.Atoi(os.Getenv("HMO_AB_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	var off atomic.Bool
	o := &engine.Options{Mode: engine.ModeFlat, NoText: os.Getenv("HMO_AB_SIDE") == "vector"}
	o.OpenVectorIndex = func(dir string, dims int) (engine.VectorIndex, error) {
		x, err := hmo.OpenVectorIndex(dir, dims)
		if err != nil {
			return nil, err
		}
		return noBounds{x.(*hnsw.Accelerated), &off}, nil
	}
	e, err := hmo.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	qs, _, err := workload(dir, 100000)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ask := func(q string) []engine.Result {
		r, err := e.Recall(ctx, engine.Query{Text: q, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ask(qs[0])
	med := func(v []float64) float64 { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	var pa, pb []float64 // the previous pass's
	// Each pass asks every query once, in blocks of 10 that alternate
	// between the two, and the next pass swaps them: each query is asked
	// as often each way, and never twice in a row (the second would find
	// the first's pages and docs in the caches).
	var ma, mb []float64
	for round := range rounds {
		var ca, cb []float64
		for lo := 0; lo < len(qs); lo += 10 {
			bounds := (lo/10+round)%2 == 0
			off.Store(!bounds)
			for _, q := range qs[lo:min(lo+10, len(qs))] {
				c0 := cpuTime()
				ask(q)
				c := float64(cpuTime()-c0) / float64(time.Millisecond)
				if bounds {
					cb = append(cb, c)
				} else {
					ca = append(ca, c)
				}
			}
		}
		if round%2 == 1 {
			ca, cb = append(ca, pa...), append(cb, pb...)
			ma, mb = append(ma, med(ca)), append(mb, med(cb))
			i := len(ma) - 1
			fmt.Printf("passes %d-%d: CPU median a query: every candidate read %.3f ms, bounds %.3f ms (%.3f)\n", round-1, round, ma[i], mb[i], mb[i]/ma[i])
		}
		pa, pb = ca, cb
	}
	if len(ma) > 0 {
		ratios := make([]float64, len(ma))
		for i := range ma {
			ratios[i] = mb[i] / ma[i]
		}
		fmt.Printf("medians: every candidate read %.3f ms, bounds %.3f ms; ratio median %.3f\n", med(ma), med(mb), med(ratios))
	}
	for _, q := range qs {
		off.Store(true)
		a := ask(q)
		off.Store(false)
		b := ask(q)
		if len(a) != len(b) {
			t.Fatalf("%q: %d and %d results", q, len(a), len(b))
		}
		for i := range a {
			if a[i].Record.ID != b[i].Record.ID || a[i].Score != b[i].Score {
				t.Fatalf("%q #%d: %d %v with every candidate read, %d %v with the bounds", q, i, a[i].Record.ID, a[i].Score, b[i].Record.ID, b[i].Score)
			}
		}
	}
}
