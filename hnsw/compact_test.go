package hnsw_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/hnsw"
)

// TestCompactDropsDeletedVectors checks that after Compact a deleted
// vector is in none of the index's files, with and without a graph, and
// that the live vectors still answer.
func TestCompactDropsDeletedVectors(t *testing.T) {
	for _, exactBelow := range []int{1000, 10} {
		x, dir := openIndex(t, 4, hnsw.Options{ExactBelow: exactBelow})
		var adds []engine.VectorDoc
		for i := range 40 {
			adds = append(adds, engine.VectorDoc{ID: uint64(i + 1), Vector: []float32{1, float32(i), 2, 3}})
		}
		secret := []float32{0.5, -0.5, 0.5, -0.5} // already unit length: stored as is
		adds = append(adds, engine.VectorDoc{ID: 99, Vector: secret})
		if err := x.Apply(adds, nil, 1); err != nil {
			t.Fatal(err)
		}
		if err := x.Save(); err != nil {
			t.Fatal(err)
		}
		raw := make([]byte, 0, 16)
		for _, f := range secret {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
		}
		holding := func() bool {
			found := false
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					b, _ := os.ReadFile(p)
					found = found || bytes.Contains(b, raw)
				}
				return nil
			})
			return found
		}
		if !holding() {
			t.Fatalf("exactBelow %d: precondition: the saved index does not hold the vector's bytes", exactBelow)
		}
		if err := x.Apply(nil, []uint64{99}, 2); err != nil {
			t.Fatal(err)
		}
		if err := x.Save(); err != nil {
			t.Fatal(err)
		}
		if !holding() {
			t.Logf("exactBelow %d: the tombstoned vector left the files before Compact", exactBelow)
		}
		if err := x.Compact(context.Background()); err != nil {
			t.Fatalf("Compact: %v", err)
		}
		if holding() {
			t.Errorf("exactBelow %d: after Compact the deleted vector is still in the index files", exactBelow)
		}
		hits, err := x.Search([]float32{1, 5, 2, 3}, 1)
		if err != nil || len(hits) != 1 || hits[0].ID == 99 || x.Len() != 40 {
			t.Errorf("exactBelow %d: after Compact: Search = %v, %v; Len = %d, want a live hit and 40", exactBelow, hits, err, x.Len())
		}
	}
}
