package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/vecfile"
)

// TestFinishBuilds: the engine's FinishBuilds builds the partition of a
// vector file that a batch of records took past its thresholds, whether
// the index was open or not, and waits for it, reporting progress; a
// store that needs nothing returns at once (an index not open, which few
// changes leave so, stays closed); a closed store says so.
func TestFinishBuilds(t *testing.T) {
	for _, n := range []int{1500, 300} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var mu sync.Mutex
			var idx *vecfile.Index
			o := testOptions(&fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
			o.Mode = engine.ModeFlat
			o.OpenVectorIndex = func(dir string, dims int) (engine.VectorIndex, error) {
				x, err := vecfile.Open(dir, &vecfile.Options{Dims: dims, Format: vecfile.Int8Rescore,
					QuickAbove: 1000, PartitionAbove: 1000, ListRows: 16})
				mu.Lock()
				idx = x
				mu.Unlock()
				return x, err
			}
			e, err := engine.Open(t.TempDir(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			var ins []engine.Input
			for i := range n {
				ins = append(ins, engine.Input{Text: fmt.Sprintf("note %d about topic%d item%d", i, i%17, i%29), Scope: "s", Session: fmt.Sprint(i / 50)})
			}
			remember(t, e, ins...)
			var last, total int64
			if err := e.FinishBuilds(context.Background(), func(d, tot int64) { last, total = d, tot }); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			x := idx
			mu.Unlock()
			// 300 changes leave the index unopened (Close would not open it).
			want := n >= 1000
			if (x != nil && x.Partitioned()) != want || (last == total && total > 0) != want {
				t.Fatalf("%d records: index open %v, partitioned %v, progress %d of %d; want partitioned %v", n, x != nil, x != nil && x.Partitioned(), last, total, want)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if err := e.FinishBuilds(context.Background(), nil); !errors.Is(err, engine.ErrClosed) {
				t.Fatalf("FinishBuilds after Close: %v, want ErrClosed", err)
			}
		})
	}
}
