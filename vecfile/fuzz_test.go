package vecfile_test

import (
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
