package pair_test

import (
	"sync/atomic"
	"testing"

	"github.com/hmo-dev/hmo/internal/pair"
)

// TestRun: every item is taken exactly once, and Run returns only after
// both calls have.
func TestRun(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 1000} {
		var next, calls atomic.Int64
		seen := make([]atomic.Int32, n)
		pair.Run(func() {
			defer calls.Add(1)
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				seen[i].Add(1)
			}
		})
		if c := calls.Load(); c != 2 {
			t.Fatalf("n=%d: Run returned after %d calls of work, want 2", n, c)
		}
		for i := range seen {
			if s := seen[i].Load(); s != 1 {
				t.Fatalf("n=%d: item %d taken %d times", n, i, s)
			}
		}
	}
}
