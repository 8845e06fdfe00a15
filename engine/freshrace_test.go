package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

// TestRecallDuringWrites runs recalls that move records between the
// tiers (reading records and their context turns) while batches are
// written; under -race it checks that the write path's in-memory copy of
// the records it just created is not read unsynchronised.
func TestRecallDuringWrites(t *testing.T) {
	o := testOptions(&fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)})
	o.Tiers.Tier1Cap, o.Tiers.Tier2Cap, o.Tiers.RecentSessions, o.Tiers.PivotalK = 6, 12, 1, 3
	e, err := engine.Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	topics := []string{"garden", "violin", "hiking", "pottery", "sailing", "chess"}
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Add(2)
	errs := make(chan error, 2)
	go func() {
		defer wg.Done()
		for b := range 20 {
			var ins []engine.Input
			for i := range 5 {
				n := b*5 + i
				ins = append(ins, engine.Input{Session: fmt.Sprint("s", n/3), Text: fmt.Sprintf("day %d: %s and %s", n, topics[n%6], topics[(n/2)%6])})
			}
			if _, err := e.RememberBatch(ctx, engine.Batch{Inputs: ins}); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := range 200 {
			if _, err := e.Recall(ctx, engine.Query{Text: fmt.Sprintf("%s day %d", topics[i%6], i%40), K: 3}); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if s := e.TierStats(); s.Promotions == 0 {
		t.Fatalf("no moves between tiers (%+v): the recalls did not read records", s)
	}
}
