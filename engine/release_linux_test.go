package engine_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/proctest"
)

// mappedKB is the resident size of this process's mappings of path, in
// KiB (/proc/self/smaps).
func mappedKB(t *testing.T, path string) int {
	t.Helper()
	kb, ok := proctest.ResidentKB(func(p string) bool { return p == path })
	if !ok {
		t.Skip("no /proc/self/smaps")
	}
	return kb
}

// TestReleaseMemory: the pages of the store file and of the vector file
// that a query mapped leave the process's resident set, and the next
// query answers the same.
func TestReleaseMemory(t *testing.T) {
	e, path := openFlatBuilt(t, 3000)
	matrix := filepath.Join(filepath.Dir(path), engine.VectorDir, "matrix")
	q := engine.Query{Text: "tide station 42 heights", K: 10}
	before, err := e.Recall(context.Background(), q)
	if err != nil || len(before) == 0 {
		t.Fatalf("recall: %v, %v", before, err)
	}
	for _, p := range []string{path, matrix} {
		if kb := mappedKB(t, p); kb == 0 {
			t.Fatalf("a recall mapped no page of %s: the test cannot see a release", p)
		}
	}
	if err := e.ReleaseMemory(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, matrix} {
		if kb := mappedKB(t, p); kb != 0 {
			t.Fatalf("%d KiB of %s still mapped after ReleaseMemory", kb, p)
		}
	}
	after, err := e.Recall(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(rs []engine.Result) (out []uint64) {
		for _, r := range rs {
			out = append(out, r.Record.ID)
		}
		return out
	}
	if !reflect.DeepEqual(ids(before), ids(after)) {
		t.Fatalf("recall after the release: %v, before: %v", ids(after), ids(before))
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.ReleaseMemory(); err == nil {
		t.Fatal("ReleaseMemory on a closed engine succeeded")
	}
}

// openFlatBuilt opens, in flat mode (it searches the archive's vector file), a
// store of n records made by buildStore, closed when the test ends, and
// returns it with the absolute path of its store file.
func openFlatBuilt(t *testing.T, n int) (*engine.Engine, string) {
	t.Helper()
	dir := buildStore(t, n)
	o := testOptions(&fakeClock{t: time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)})
	o.Mode = engine.ModeFlat
	e, err := engine.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	path, err := filepath.Abs(filepath.Join(dir, engine.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	return e, path
}
