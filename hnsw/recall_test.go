package hnsw_test

import (
	"testing"

	"github.com/hmo-dev/hmo/hnsw"
)

// TestRecall measures recall@10 of the graph path against exact search on
// 20K clustered 100-d unit vectors with the default options. Building the
// graph takes seconds, so it is skipped with -short and under -race.
func TestRecall(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds a 20K graph: skipped with -short and -race")
	}
	t.Parallel()
	const n, dims, queries, k = 20_000, 100, 200, 10
	d := newDataset(1, dims, 100)
	vecs := d.points(n)
	x, _ := openIndex(t, dims, hnsw.Options{ExactBelow: -1})
	ref := model{}
	for i, v := range vecs {
		ref[uint64(i)] = v
	}
	for i := 0; i < n; i += 1000 {
		mustApply(t, x, docs(uint64(i), vecs[i:i+1000]), nil, uint64(i))
	}
	var sum float64
	for range queries {
		q := d.point()
		sum += recall(mustSearch(t, x, q, k), ref.search(q, k))
	}
	got := sum / queries
	t.Logf("recall@%d over %d queries: %.4f", k, queries, got)
	if got < 0.95 {
		t.Errorf("recall@%d = %.4f, want >= 0.95", k, got)
	}
}
