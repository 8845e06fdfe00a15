package hnsw_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/hnsw"
)

// buildSaved fills an index in a fresh directory with n clustered vectors,
// replaces and deletes some, saves it and closes it. It returns the
// directory, the vectors live at the end and their generator.
func buildSaved(t *testing.T, n, dims int, opts hnsw.Options) (string, model, *dataset) {
	t.Helper()
	d := newDataset(2, dims, 8)
	dir := t.TempDir()
	opts.Dims = dims
	x, err := hnsw.Open(dir, &opts)
	if err != nil {
		t.Fatal(err)
	}
	ref := model{}
	vecs := d.points(n)
	for i, v := range vecs {
		ref[uint64(i)] = v
	}
	mustApply(t, x, docs(0, vecs), nil, 41)
	var dels []uint64
	var repl []engine.VectorDoc
	for i := 0; i < n; i += 10 {
		dels = append(dels, uint64(i))
		delete(ref, uint64(i))
		v := d.point()
		repl = append(repl, engine.VectorDoc{ID: uint64(i + 1), Vector: v})
		ref[uint64(i+1)] = v
	}
	mustApply(t, x, repl, dels, 42)
	if err := x.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return dir, ref, d
}

func TestSaveLoadRoundTrip(t *testing.T) {
	t.Parallel()
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			const n, dims = 1000, 24
			opts := p.opts
			opts.CompactRatio = 1 // keep the tombstones, to save them
			dir, ref, d := buildSaved(t, n, dims, opts)
			opts.Dims = dims
			x, err := hnsw.Open(dir, &opts)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer x.Close()
			if got := x.Watermark(); got != 42 {
				t.Errorf("Watermark = %d, want 42", got)
			}
			if got := x.Len(); got != len(ref) {
				t.Errorf("Len = %d, want %d", got, len(ref))
			}
			// Search the reopened index, then a copy of it saved again and
			// reopened: the same graph must give the same hits.
			copyDir := t.TempDir()
			copyIndex(t, dir, copyDir)
			y, err := hnsw.Open(copyDir, &opts)
			if err != nil {
				t.Fatalf("Open copy: %v", err)
			}
			defer y.Close()
			var sumRecall float64
			for i := range 100 {
				q := d.point()
				got := mustSearch(t, x, q, 10)
				if again := mustSearch(t, y, q, 10); !slices.Equal(got, again) {
					t.Fatalf("query %d: copy gives %v, want %v", i, again, got)
				}
				sumRecall += recall(got, ref.search(q, 10))
				for _, h := range got {
					if _, live := ref[h.ID]; !live {
						t.Fatalf("query %d: deleted id %d returned after reload", i, h.ID)
					}
				}
			}
			if avg := sumRecall / 100; avg < 0.95 {
				t.Errorf("recall after reload %.3f, want >= 0.95", avg)
			}
		})
	}
}

// copyIndex copies the files of a saved index.
func copyIndex(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSaveFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vec")
	x, err := hnsw.Open(dir, &hnsw.Options{Dims: 4, ExactBelow: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	mustApply(t, x, docs(1, newDataset(1, 4, 2).points(10)), nil, 3)
	if err := x.Save(); err != nil {
		t.Fatalf("Save: %v", err)
	}
	first := listDir(t, dir)
	if err := x.Save(); err != nil {
		t.Fatalf("second Save: %v", err)
	}
	if again := listDir(t, dir); !slices.Equal(again, first) {
		t.Errorf("Save of an unchanged index rewrote files: %v, then %v", first, again)
	}
	mustApply(t, x, nil, []uint64{1}, 4)
	if err := x.Save(); err != nil {
		t.Fatalf("third Save: %v", err)
	}
	files := listDir(t, dir)
	if len(files) != 2 || slices.Equal(files, first) {
		t.Errorf("files after a changed Save = %v, want a new graph and the meta (was %v)", files, first)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o700 {
		t.Errorf("directory mode %o, want 700", got)
	}
	for _, name := range files {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s mode %o, want 600", name, got)
		}
	}
}

// TestSmallIndexSavesNoGraph checks that an index at or below ExactBelow
// keeps no graph: Save writes the meta file alone.
func TestSmallIndexSavesNoGraph(t *testing.T) {
	x, dir := openIndex(t, 4, hnsw.Options{ExactBelow: 10})
	mustApply(t, x, docs(1, newDataset(1, 4, 2).points(10)), nil, 1)
	if err := x.Save(); err != nil {
		t.Fatalf("Save: %v", err)
	}
	if got := listDir(t, dir); !slices.Equal(got, []string{"hnsw.meta"}) {
		t.Errorf("files = %v, want [hnsw.meta]", got)
	}
	mustApply(t, x, docs(11, newDataset(2, 4, 2).points(1)), nil, 2)
	if err := x.Save(); err != nil {
		t.Fatalf("Save: %v", err)
	}
	if err := hnsw.LoadGraphFile(dir, 4); err != nil {
		t.Errorf("11 vectors, ExactBelow 10: saved graph does not load: %v", err)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestOpenRemovesStaleFiles(t *testing.T) {
	dir, _, _ := buildSaved(t, 20, 4, hnsw.Options{})
	stale := []string{"hnsw-00000000000000ff.graph", "hnsw.meta.123.tmp", "hnsw-0000000000000002.graph.9.tmp"}
	keep := []string{"notes.txt", "0000000000000002.graph"}
	for _, name := range append(slices.Clone(stale), keep...) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	x, err := hnsw.Open(dir, &hnsw.Options{Dims: 4})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer x.Close()
	files := listDir(t, dir)
	for _, name := range stale {
		if slices.Contains(files, name) {
			t.Errorf("stale %s not removed", name)
		}
	}
	for _, name := range keep {
		if !slices.Contains(files, name) {
			t.Errorf("unrelated %s removed", name)
		}
	}
	if got := x.Len(); got != 18 {
		t.Errorf("Len = %d, want 18", got)
	}
}

// TestOpenCorruptMeta damages the meta file, which holds the vectors:
// Open must refuse it with ErrCorrupt.
func TestOpenCorruptMeta(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, meta string)
		dims   int
	}{
		{"header byte flipped", func(t *testing.T, meta string) { flipByte(t, meta, 30) }, 4},
		{"vector byte flipped", func(t *testing.T, meta string) { flipByte(t, meta, -10) }, 4},
		{"truncated", func(t *testing.T, meta string) { truncate(t, meta, 20) }, 4},
		{"empty", func(t *testing.T, meta string) { truncate(t, meta, 0) }, 4},
		{"garbage", func(t *testing.T, meta string) { write(t, meta, []byte(strings.Repeat("hnsw", 40))) }, 4},
		{"other dims", func(*testing.T, string) {}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, _, _ := buildSaved(t, 30, 4, hnsw.Options{ExactBelow: -1})
			meta, _ := savedFiles(t, dir)
			tt.damage(t, meta)
			x, err := hnsw.Open(dir, &hnsw.Options{Dims: tt.dims})
			if !errors.Is(err, hnsw.ErrCorrupt) {
				t.Errorf("Open error = %v, want ErrCorrupt", err)
			}
			if x != nil {
				t.Errorf("Open returned an index with an error")
			}
		})
	}
}

// TestOpenCorruptGraph damages the graph file: Open must still give the
// saved content, searched exactly, and the next Apply rebuilds a graph
// that a later Open loads.
func TestOpenCorruptGraph(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		damage func(t *testing.T, graph string)
	}{
		{"byte flipped", func(t *testing.T, graph string) { flipByte(t, graph, 100) }},
		{"truncated", func(t *testing.T, graph string) { truncate(t, graph, 50) }},
		{"missing", func(t *testing.T, graph string) { os.Remove(graph) }},
		{"of another index", func(t *testing.T, graph string) {
			otherDir, _, _ := buildSaved(t, 30, 4, hnsw.Options{ExactBelow: -1})
			_, other := savedFiles(t, otherDir)
			b, err := os.ReadFile(other)
			if err != nil {
				t.Fatal(err)
			}
			write(t, graph, b)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := hnsw.Options{Dims: 4, ExactBelow: -1}
			dir, ref, d := buildSaved(t, 300, 4, opts)
			_, graph := savedFiles(t, dir)
			tt.damage(t, graph)
			x, err := hnsw.Open(dir, &opts)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer x.Close()
			if got := x.Len(); got != len(ref) {
				t.Errorf("Len = %d, want %d", got, len(ref))
			}
			for range 20 {
				q := d.point()
				if got, want := ids(mustSearch(t, x, q, 10)), ids(ref.search(q, 10)); !slices.Equal(got, want) {
					t.Fatalf("hits = %v, want %v", got, want)
				}
			}
			mustApply(t, x, docs(1000, d.points(1)), nil, 43)
			if err := x.Save(); err != nil {
				t.Fatalf("Save: %v", err)
			}
			if err := hnsw.LoadGraphFile(dir, 4); err != nil {
				t.Errorf("graph saved after the rebuild does not load: %v", err)
			}
		})
	}
}

func savedFiles(t *testing.T, dir string) (meta, graph string) {
	t.Helper()
	for _, name := range listDir(t, dir) {
		switch {
		case strings.HasSuffix(name, ".meta"):
			meta = filepath.Join(dir, name)
		case strings.HasSuffix(name, ".graph"):
			graph = filepath.Join(dir, name)
		}
	}
	if meta == "" || graph == "" {
		t.Fatalf("saved files missing in %s", dir)
	}
	return meta, graph
}

// flipByte inverts the byte at off, counted from the end if negative.
func flipByte(t *testing.T, path string, off int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += len(b)
	}
	b[off] ^= 0xff
	write(t, path, b)
}

func truncate(t *testing.T, path string, n int64) {
	t.Helper()
	if err := os.Truncate(path, n); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
