package hnsw_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/hnsw"
	"github.com/hmo-dev/hmo/vecfile"
)

// plainExact is an exact index that cannot return its vectors.
type plainExact struct{ hnsw.Exact }

// TestAcceleratedReadsVectors: an Accelerated returns the exact index's
// vectors when that index is an engine.VectorReader, and says it keeps
// none otherwise.
func TestAcceleratedReadsVectors(t *testing.T) {
	const dims = 16
	vecs := newDataset(5, dims, 4).points(20)
	dir := t.TempDir()
	x, err := vecfile.Open(dir, &vecfile.Options{Dims: dims})
	if err != nil {
		t.Fatal(err)
	}
	a, err := hnsw.Accelerate(x, filepath.Join(dir, "graph"), &hnsw.AccelOptions{GraphAbove: -1, Graph: hnsw.Options{Dims: dims}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Apply(docs(1, vecs), []uint64{3}, 1); err != nil {
		t.Fatal(err)
	}
	var r engine.VectorReader = a
	if !r.KeepsVectors() {
		t.Fatal("KeepsVectors false over a Float32 vecfile")
	}
	for _, id := range []uint64{1, 3, 20, 21} {
		want, wantOK, err := x.Vector(id)
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := r.Vector(id)
		if err != nil || ok != wantOK || !slices.Equal(got, want) {
			t.Errorf("Vector(%d) = %v, %v, %v; want the exact index's %v, %v", id, got, ok, err, want, wantOK)
		}
	}
	if id, _, ok, err := r.NextVector(3); !ok || err != nil || id != 4 {
		t.Errorf("NextVector(3) = %d, %v, %v; want 4", id, ok, err)
	}

	p, err := hnsw.Accelerate(plainExact{x}, t.TempDir(), &hnsw.AccelOptions{GraphAbove: -1, Graph: hnsw.Options{Dims: dims}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close() // closes x before a.Close does: that one reports ErrClosed
	if p.KeepsVectors() {
		t.Error("KeepsVectors true over an index that cannot return vectors")
	}
	if _, ok, _ := p.Vector(1); ok {
		t.Error("Vector(1) found over an index that cannot return vectors")
	}
	if _, _, ok, _ := p.NextVector(1); ok {
		t.Error("NextVector(1) found over an index that cannot return vectors")
	}
}
