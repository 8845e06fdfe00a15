package vecfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/vecfile"
)

// TestVectorByID reads rows back by id and by the next live id, against
// a model of what was applied: ids 1..40 applied in order, 55, 50 and 52
// after them (50 and 52 out of id order), 3, 4, 5 and 52 deleted, 7
// replaced.
func TestVectorByID(t *testing.T) {
	dir := t.TempDir()
	x := open(t, dir, nil)
	defer x.Close()
	all := docs(2, 60)
	want := map[uint64][]float32{}
	if err := x.Apply(all[:40], nil, 1); err != nil {
		t.Fatal(err)
	}
	late := []engine.VectorDoc{all[54], all[49], all[51]}
	for i, d := range late {
		if err := x.Apply([]engine.VectorDoc{d}, nil, uint64(2+i)); err != nil {
			t.Fatal(err)
		}
	}
	repl := all[58]
	repl.ID = 7
	if err := x.Apply([]engine.VectorDoc{repl}, []uint64{3, 4, 5, 52}, 5); err != nil {
		t.Fatal(err)
	}
	for _, d := range append(append(all[:40], late...), repl) {
		want[d.ID] = unit(d.Vector)
	}
	for _, id := range []uint64{3, 4, 5, 52} {
		delete(want, id)
	}
	if !x.KeepsVectors() {
		t.Fatal("KeepsVectors false for a Float32 index")
	}
	for id := uint64(0); id <= 60; id++ {
		v, ok, err := x.Vector(id)
		if err != nil {
			t.Fatalf("Vector(%d): %v", id, err)
		}
		if w, live := want[id]; ok != live || !slices.Equal(v, w) {
			t.Errorf("Vector(%d) = %v, %v; want %v, %v", id, v, ok, w, live)
		}
	}
	next := []struct{ from, id uint64 }{
		{0, 1}, {1, 1}, {3, 6}, {6, 6}, {40, 40}, {41, 50}, {50, 50}, {51, 55}, {52, 55}, {55, 55},
	}
	for _, tc := range next {
		id, v, ok, err := x.NextVector(tc.from)
		if err != nil || !ok || id != tc.id || !slices.Equal(v, want[tc.id]) {
			t.Errorf("NextVector(%d) = %d, %v, %v; want %d, %v", tc.from, id, ok, err, tc.id, want[tc.id])
		}
	}
	if id, _, ok, err := x.NextVector(56); ok || err != nil {
		t.Errorf("NextVector(56) = %d, %v, %v; want none", id, ok, err)
	}
}

// TestVectorDamagedRow checks that a read by id verifies the row it
// reads, also when Open skipped the verification, and only that row.
func TestVectorDamagedRow(t *testing.T) {
	dir := t.TempDir()
	x := open(t, dir, nil)
	if err := x.Apply(docs(1, 100), nil, 100); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "matrix")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[4096+dims*4*9+1] ^= 0x55 // row 9: id 10
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	x = open(t, dir, &vecfile.Options{Dims: dims, SkipVerify: true})
	defer x.Close()
	if _, _, err := x.Vector(10); !errors.Is(err, vecfile.ErrCorrupt) {
		t.Errorf("Vector(10): %v, want ErrCorrupt", err)
	}
	if _, _, _, err := x.NextVector(8); err != nil {
		t.Errorf("NextVector(8): %v, want row 8 read", err)
	}
	if _, _, _, err := x.NextVector(10); !errors.Is(err, vecfile.ErrCorrupt) {
		t.Errorf("NextVector(10): %v, want ErrCorrupt", err)
	}
	if _, ok, err := x.Vector(11); !ok || err != nil {
		t.Errorf("Vector(11) = %v, %v; want it read", ok, err)
	}
}

// TestVectorInt8KeepsNone: an Int8 index holds approximations, and says so.
func TestVectorInt8KeepsNone(t *testing.T) {
	x := open(t, t.TempDir(), &vecfile.Options{Dims: dims, Format: vecfile.Int8})
	defer x.Close()
	if err := x.Apply(docs(1, 10), nil, 10); err != nil {
		t.Fatal(err)
	}
	if x.KeepsVectors() {
		t.Error("KeepsVectors true for an Int8 index")
	}
	if _, ok, err := x.Vector(1); ok || err != nil {
		t.Errorf("Vector(1) = %v, %v; want none", ok, err)
	}
	if _, _, ok, err := x.NextVector(1); ok || err != nil {
		t.Errorf("NextVector(1) = %v, %v; want none", ok, err)
	}
}

// TestVectorClosed: reads after Close fail with ErrClosed.
func TestVectorClosed(t *testing.T) {
	x := open(t, t.TempDir(), nil)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := x.Vector(1); !errors.Is(err, vecfile.ErrClosed) {
		t.Errorf("Vector: %v, want ErrClosed", err)
	}
	if _, _, _, err := x.NextVector(1); !errors.Is(err, vecfile.ErrClosed) {
		t.Errorf("NextVector: %v, want ErrClosed", err)
	}
}
