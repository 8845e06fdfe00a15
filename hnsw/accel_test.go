package hnsw_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/hnsw"
	"github.com/hmo-dev/hmo/vecfile"
)

func openAccel(t *testing.T, dir string, dims, above int) *hnsw.Accelerated {
	t.Helper()
	x, err := vecfile.Open(dir, &vecfile.Options{Dims: dims})
	if err != nil {
		t.Fatal(err)
	}
	a, err := hnsw.Accelerate(x, filepath.Join(dir, "graph"), &hnsw.AccelOptions{GraphAbove: above, Graph: hnsw.Options{Dims: dims}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// waitGraph waits until the background builder holds n vectors.
func waitGraph(t *testing.T, a *hnsw.Accelerated, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for a.GraphLen() < n {
		if time.Now().After(deadline) {
			t.Fatalf("graph holds %d vectors after 2 minutes, want %d", a.GraphLen(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAccelerated: below GraphAbove no graph exists; above it the builder
// builds one in the background; the answers keep new rows (exact tail)
// and drop deleted ones; recall@10 against the exact scan is >= 0.95; a
// reopened index resumes from the saved graph; Close stops the builder.
func TestAccelerated(t *testing.T) {
	const dims, k = 32, 10
	d := newDataset(3, dims, 30)
	dir := t.TempDir()
	a := openAccel(t, dir, dims, 2000)
	ref := model{}
	add := func(first uint64, vecs [][]float32, dels []uint64, wm uint64) {
		t.Helper()
		if err := a.Apply(docs(first, vecs), dels, wm); err != nil {
			t.Fatal(err)
		}
		for i, v := range vecs {
			ref[first+uint64(i)] = v
		}
		for _, id := range dels {
			delete(ref, id)
		}
	}
	add(1, d.points(1500), nil, 1)
	time.Sleep(50 * time.Millisecond)
	if a.GraphLen() != 0 {
		t.Fatalf("graph of %d vectors below GraphAbove", a.GraphLen())
	}
	add(1501, d.points(2500), []uint64{5, 6, 7}, 2)
	waitGraph(t, a, 3997)
	// Rows the graph does not hold yet are still found: a query equal to
	// a just-added vector finds it first.
	fresh := d.point()
	add(4001, [][]float32{fresh}, []uint64{8}, 3)
	hits, err := a.Search(fresh, k)
	if err != nil || len(hits) == 0 || hits[0].ID != 4001 {
		t.Fatalf("fresh vector: %v %v", hits, err)
	}
	var sum float64
	const queries = 100
	for range queries {
		q := d.point()
		got, err := a.Search(q, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range got {
			if _, ok := ref[h.ID]; !ok {
				t.Fatalf("deleted or unknown id %d returned", h.ID)
			}
		}
		sum += recall(got, ref.search(q, k))
	}
	if r := sum / queries; r < 0.95 {
		t.Fatalf("recall@10 %.3f < 0.95", r)
	} else {
		t.Logf("recall@10 against the exact scan: %.3f", r)
	}
	f := engine.VectorFilter{From: time.Unix(0, 1)}
	if _, err := a.SearchFilter(fresh, k, f); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := openAccel(t, dir, dims, 2000)
	defer b.Close()
	waitGraph(t, b, 3997)
	if hits, _ := b.Search(fresh, 1); len(hits) != 1 || hits[0].ID != 4001 {
		t.Fatalf("reopened: %v", hits)
	}
}
