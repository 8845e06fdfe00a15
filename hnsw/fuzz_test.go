package hnsw_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hmo-dev/hmo/hnsw"
)

// fuzzDims is the vector length of the fuzz seeds: small, so that the
// fuzzer reaches the structure rather than the floats.
const fuzzDims = 4

// savedSeed returns the meta and graph files of a small saved index with
// n slots, a tenth of them tombstones (if n >= 10).
func savedSeed(f *testing.F, n int) (meta, graph []byte) {
	f.Helper()
	dir := f.TempDir()
	x, err := hnsw.Open(dir, &hnsw.Options{Dims: fuzzDims, CompactRatio: 1, ExactBelow: -1})
	if err != nil {
		f.Fatal(err)
	}
	d := newDataset(int64(n), fuzzDims, 2)
	mustApply(f, x, docs(0, d.points(n*9/10)), nil, 1)
	mustApply(f, x, docs(0, d.points(n-n*9/10)), nil, 2) // replaces
	if err := x.Close(); err != nil {
		f.Fatal(err)
	}
	for _, e := range mustReadDir(f, dir) {
		b, err := os.ReadFile(filepath.Join(dir, e))
		if err != nil {
			f.Fatal(err)
		}
		if filepath.Ext(e) == ".meta" {
			meta = b
		} else {
			graph = b
		}
	}
	return meta, graph
}

func mustReadDir(tb testing.TB, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// FuzzGraph feeds arbitrary bytes to the graph loader, past the checksum
// that guards it in Open: it must reject them with ErrCorrupt or load a
// graph that searches and extends without a panic inside coder/hnsw.
func FuzzGraph(f *testing.F) {
	for _, n := range []int{0, 1, 12, 40} {
		_, graph := savedSeed(f, n)
		if err := hnsw.LoadGraph(graph, fuzzDims, n); err != nil {
			f.Fatalf("seed of %d slots: %v", n, err)
		}
		f.Add(graph, uint8(n))
	}
	f.Fuzz(func(t *testing.T, graph []byte, nslots uint8) {
		err := hnsw.LoadGraph(graph, fuzzDims, int(nslots))
		if err != nil && !errors.Is(err, hnsw.ErrCorrupt) {
			t.Fatalf("LoadGraph error = %v, want nil or ErrCorrupt", err)
		}
	})
}

// FuzzMeta feeds arbitrary bytes, sealed with a valid checksum so that
// they reach the parser, to the meta decoder: it must reject them with
// ErrCorrupt or decode them to what encodes back to the same bytes.
func FuzzMeta(f *testing.F) {
	for _, n := range []int{0, 12} {
		meta, _ := savedSeed(f, n)
		if _, err := hnsw.ReencodeMeta(meta, fuzzDims); err != nil {
			f.Fatalf("seed of %d slots: %v", n, err)
		}
		f.Add(meta[:len(meta)-4])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		meta := hnsw.SealMeta(body)
		got, err := hnsw.ReencodeMeta(meta, fuzzDims)
		if err != nil {
			if !errors.Is(err, hnsw.ErrCorrupt) {
				t.Fatalf("error = %v, want ErrCorrupt", err)
			}
			return
		}
		if !bytes.Equal(got, meta) {
			t.Fatalf("re-encoded meta differs:\n got %x\nwant %x", got, meta)
		}
	})
}

// FuzzOpen writes arbitrary meta and graph files and opens them: Open
// must fail with ErrCorrupt or give an index that searches and applies.
func FuzzOpen(f *testing.F) {
	meta, graph := savedSeed(f, 12)
	f.Add(meta, graph)
	f.Fuzz(func(t *testing.T, meta, graph []byte) {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "hnsw.meta"), meta)
		write(t, filepath.Join(dir, "hnsw-0000000000000001.graph"), graph)
		x, err := hnsw.Open(dir, &hnsw.Options{Dims: fuzzDims, ExactBelow: -1})
		if err != nil {
			if !errors.Is(err, hnsw.ErrCorrupt) {
				t.Fatalf("Open error = %v, want ErrCorrupt", err)
			}
			return
		}
		defer x.Close()
		if _, err := x.Search([]float32{1, 0, 0, 0}, 5); err != nil {
			t.Fatalf("Search: %v", err)
		}
		mustApply(t, x, docs(1000, [][]float32{{0, 1, 0, 0}}), []uint64{1}, 9)
	})
}
