package hmo_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/vecfile"
)

// TestVectorFileFormats checks the default vector index's layout: a new
// store keeps int8 rows only (no float32 matrix, no companion file), and
// a store whose vector file an older hmo made (float32 rows and their
// int8 companion) opens, writable and read-only, without a rebuild, keeps
// its layout and answers as before.
func TestVectorFileFormats(t *testing.T) {
	ctx := context.Background()
	older := func(dir string, dims int) (engine.VectorIndex, error) {
		return vecfile.Open(dir, &vecfile.Options{Dims: dims})
	}
	query := "food allergy"
	answers := func(e *engine.Engine) ([]uint64, []engine.VectorHit) {
		t.Helper()
		res, err := e.Recall(ctx, engine.Query{Text: query, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		var ids []uint64
		for _, r := range res {
			ids = append(ids, r.Record.ID)
		}
		got, err := e.Recall(ctx, engine.Query{Text: query, K: 1})
		if err != nil || len(got) == 0 {
			t.Fatalf("recall: %v %v", got, err)
		}
		// The record's own vector: its nearest is itself.
		vs, err := e.Vectors([]uint64{got[0].Record.ID})
		if err != nil || vs[0] == nil {
			t.Fatalf("vectors: %v %v", vs, err)
		}
		near, err := e.NearestVectors(vs[0], 10)
		if err != nil || len(near) == 0 || near[0].ID != got[0].Record.ID {
			t.Fatalf("nearest vectors of record %d: %v %v", got[0].Record.ID, near, err)
		}
		return ids, near
	}
	files := func(dir string) map[string]int64 {
		t.Helper()
		out := map[string]int64{}
		des, err := os.ReadDir(filepath.Join(dir, engine.VectorDir))
		if err != nil {
			t.Fatal(err)
		}
		for _, de := range des {
			if fi, err := de.Info(); err == nil && !de.IsDir() {
				out[de.Name()] = fi.Size()
			}
		}
		return out
	}
	build := func(dir string, o *engine.Options) {
		t.Helper()
		e, err := hmo.Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Remember(ctx, demoInputs(t)...); err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	oldDir, newDir := t.TempDir(), t.TempDir()
	build(oldDir, &engine.Options{Mode: engine.ModeFlat, OpenVectorIndex: older})
	build(newDir, &engine.Options{Mode: engine.ModeFlat})

	e, err := hmo.Open(oldDir, &engine.Options{Mode: engine.ModeFlat, OpenVectorIndex: older})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs, wantNear := answers(e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	before := files(oldDir)
	if _, ok := before["int8"]; !ok {
		t.Fatalf("the older layout has no companion: %v", before)
	}
	for _, ro := range []bool{false, true} {
		e, err := hmo.Open(oldDir, &engine.Options{Mode: engine.ModeFlat, ReadOnly: ro})
		if err != nil {
			t.Fatal(err)
		}
		ids, near := answers(e)
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids, wantIDs) || !slices.Equal(near, wantNear) {
			t.Fatalf("read-only %v: older store answers %v %v, made %v %v", ro, ids, near, wantIDs, wantNear)
		}
		if after := files(oldDir); !maps.Equal(after, before) {
			t.Fatalf("read-only %v: older store's vector files %v, were %v", ro, after, before)
		}
	}

	e, err = hmo.Open(newDir, &engine.Options{Mode: engine.ModeFlat})
	if err != nil {
		t.Fatal(err)
	}
	ids, near := answers(e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, wantIDs) || !slices.Equal(near, wantNear) {
		t.Fatalf("a new store answers %v %v, the older %v %v", ids, near, wantIDs, wantNear)
	}
	nf := files(newDir)
	if _, ok := nf["int8"]; ok {
		t.Fatalf("a new store keeps a companion file: %v", nf)
	}
	if nf["matrix"] == 0 || nf["matrix"] >= before["matrix"]/2 {
		t.Fatalf("a new store's matrix is %d bytes, the older one's %d: float32 rows", nf["matrix"], before["matrix"])
	}
}
