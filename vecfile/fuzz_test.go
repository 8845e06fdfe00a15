package vecfile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/vecfile"
)

// FuzzOpen feeds arbitrary slots and matrix files to Open: it must fail
// with an error or open an index that searches and applies without
// panicking.
func FuzzOpen(f *testing.F) {
	seed := f.TempDir()
	x, err := vecfile.Open(seed, &vecfile.Options{Dims: dims})
	if err != nil {
		f.Fatal(err)
	}
	if err := x.Apply(docs(1, 20), []uint64{3}, 20); err != nil {
		f.Fatal(err)
	}
	x.Close()
	slots, _ := os.ReadFile(filepath.Join(seed, "slots"))
	matrix, _ := os.ReadFile(filepath.Join(seed, "matrix"))
	f.Add(slots, matrix)
	f.Add(slots[:4096+48*3], matrix)
	f.Add(slots, matrix[:4096])
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, slots, matrix []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "slots"), slots, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "matrix"), matrix, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, skip := range []bool{false, true} {
			x, err := vecfile.Open(dir, &vecfile.Options{Dims: dims, SkipVerify: skip})
			if err != nil {
				continue
			}
			q := docs(2, 1)[0].Vector
			_, _ = x.Search(q, 5)
			_, _ = x.SearchFilter(q, 5, engine.VectorFilter{Scope: "scope1"})
			_ = x.Apply(docs(3, 5), []uint64{1, 2}, x.Watermark()+1)
			_ = x.Close()
		}
	})
}

// FuzzQ4File feeds arbitrary q4 files to Open beside intact slots and
// matrix: the q4 file is derived data, so Open must succeed whatever it
// holds, rebuild it, and search exactly as a fresh build does; a
// read-only Open must succeed too and search as the int8 scan does
// when the file is not usable.
func FuzzQ4File(f *testing.F) {
	const d = 20
	seed := f.TempDir()
	opts := &vecfile.Options{Dims: d, Format: vecfile.Int8Rescore, QuickAbove: 10}
	x, err := vecfile.Open(seed, opts)
	if err != nil {
		f.Fatal(err)
	}
	ds := docsDims(1, 400, d)
	if err := x.Apply(ds, []uint64{3}, 1); err != nil {
		f.Fatal(err)
	}
	x.Close()
	if x, err = vecfile.Open(seed, opts); err != nil { // builds the q4 file
		f.Fatal(err)
	}
	x.Close()
	q4, _ := os.ReadFile(filepath.Join(seed, "q4"))
	slots, _ := os.ReadFile(filepath.Join(seed, "slots"))
	matrix, _ := os.ReadFile(filepath.Join(seed, "matrix"))
	f.Add(q4)
	f.Add(q4[:4096])
	f.Add(q4[:4096+64*10+5])
	f.Add([]byte{})
	queries := docsDims(2, 4, d)
	search := func(x *vecfile.Index) (string, error) { return searchAll(x, queries) }
	if x, err = vecfile.Open(seed, opts); err != nil {
		f.Fatal(err)
	}
	fresh, err := search(x)
	if err != nil {
		f.Fatal(err)
	}
	x.Close()
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		for name, data := range map[string][]byte{"slots": slots, "matrix": matrix, "q4": b} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		ro := *opts
		ro.ReadOnly = true
		r, err := vecfile.Open(dir, &ro)
		if err != nil {
			t.Fatalf("read-only open with a damaged q4 file: %v", err)
		}
		if _, err := search(r); err != nil {
			t.Fatalf("read-only search: %v", err)
		}
		r.Close()
		x, err := vecfile.Open(dir, opts)
		if err != nil {
			t.Fatalf("open with a damaged q4 file: %v", err)
		}
		defer x.Close()
		got, err := search(x)
		if err != nil {
			t.Fatal(err)
		}
		if got != fresh {
			t.Fatalf("after rebuilding the q4 file: %s, want %s", got, fresh)
		}
	})
}

// FuzzIVFFile feeds arbitrary ivf files to Open beside intact slots,
// matrix and q4 file: the partition is derived data, so Open must
// succeed whatever it holds and, with every list probed, search exactly
// as a fresh build does (the rows it holds from its lists, the others
// from the q4 file, or all from the q4 file after a rebuild); a
// read-only Open must succeed and search without error.
func FuzzIVFFile(f *testing.F) {
	fuzzPartition(f, "ivf", []string{"slots", "matrix", "q4"}, &vecfile.Options{Dims: 20, Format: vecfile.Int8Rescore, QuickAbove: 10, PartitionAbove: 10, ListRows: 16, Probes: 1 << 16})
}

// FuzzIVF8File is FuzzIVFFile for the partition of the int8 rows (an
// index with no q4 file): arbitrary ivf8 files beside intact slots and
// matrix.
func FuzzIVF8File(f *testing.F) {
	fuzzPartition(f, "ivf8", []string{"slots", "matrix"}, &vecfile.Options{Dims: 20, Format: vecfile.Int8Rescore, QuickAbove: -1, Int8PartitionAbove: 10, Int8ListRows: 16, Int8Probes: 1 << 16})
}

// fuzzPartition is the body of the partition files' fuzz targets: name
// is the partition's file, intact the files kept as a build left them.
func fuzzPartition(f *testing.F, name string, intact []string, opts *vecfile.Options) {
	d := opts.Dims
	seed := f.TempDir()
	x, err := vecfile.Open(seed, opts)
	if err != nil {
		f.Fatal(err)
	}
	ds := docsDims(1, 400, d)
	if err := x.Apply(ds, []uint64{3}, 1); err != nil {
		f.Fatal(err)
	}
	x.Close()
	if x, err = vecfile.Open(seed, opts); err != nil { // builds the partition (and the q4 file it partitions)
		f.Fatal(err)
	}
	vecfile.WaitPartition(x)
	x.Close()
	files := map[string][]byte{}
	for _, n := range append(intact, name) {
		if files[n], err = os.ReadFile(filepath.Join(seed, n)); err != nil {
			f.Fatal(err)
		}
	}
	ivf := files[name]
	f.Add(ivf)
	f.Add(ivf[:4096])
	f.Add(ivf[:len(ivf)-70])
	f.Add([]byte{})
	queries := docsDims(2, 4, d)
	search := func(x *vecfile.Index) (string, error) { return searchAll(x, queries) }
	if x, err = vecfile.Open(seed, opts); err != nil {
		f.Fatal(err)
	}
	fresh, err := search(x)
	if err != nil {
		f.Fatal(err)
	}
	x.Close()
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		for n, data := range files {
			if n == name {
				data = b
			}
			if err := os.WriteFile(filepath.Join(dir, n), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		ro := *opts
		ro.ReadOnly = true
		r, err := vecfile.Open(dir, &ro)
		if err != nil {
			t.Fatalf("read-only open with a damaged ivf file: %v", err)
		}
		if got, err := search(r); err != nil || got != fresh {
			t.Fatalf("read-only search: %v, %s, want %s", err, got, fresh)
		}
		r.Close()
		x, err := vecfile.Open(dir, opts)
		if err != nil {
			t.Fatalf("open with a damaged ivf file: %v", err)
		}
		defer x.Close()
		vecfile.WaitPartition(x)
		got, err := search(x)
		if err != nil {
			t.Fatal(err)
		}
		if got != fresh {
			t.Fatalf("after opening a damaged ivf file: %s, want %s", got, fresh)
		}
	})
}

// searchAll is the hits of each query's search for 64, printed: what the
// fuzz targets compare with a fresh index's.
func searchAll(x *vecfile.Index, queries []engine.VectorDoc) (string, error) {
	var out [][]engine.VectorHit
	for _, q := range queries {
		h, err := x.Search(q.Vector, 64)
		if err != nil {
			return "", err
		}
		out = append(out, h)
	}
	return fmt.Sprint(out), nil
}
