package vecfile_test

import (
	"path/filepath"
	"testing"

	"github.com/hmo-dev/hmo/internal/proctest"
)

// residentKB sums the resident pages of this process's mappings of the
// file p (/proc/self/smaps), in KiB.
func residentKB(t *testing.T, p string) int {
	t.Helper()
	kb, ok := proctest.ResidentKB(func(path string) bool { return path == p })
	if !ok {
		t.Skip("no /proc/self/smaps")
	}
	return kb
}

// TestQuickResidentSet: an index searched through the 4-bit pass keeps
// its int8 rows and its slots out of the resident set (Open gives the
// slots it verified back; the candidates' rows and slots are read by
// pread), and only the q4 file in it.
func TestQuickResidentSet(t *testing.T) {
	const d = 16
	dir := t.TempDir()
	x := open(t, dir, quickOpts(d))
	mustApply(t, x, docsDims(1, 30000, d), nil, 1)
	mustClose(t, x)
	x = open(t, dir, quickOpts(d))
	defer x.Close()
	for _, q := range docsDims(2, 30, d) {
		if _, err := x.Search(q.Vector, x.RescoreCandidates(100)); err != nil {
			t.Fatal(err)
		}
	}
	dir, _ = filepath.Abs(dir)
	for _, name := range []string{"slots", "matrix"} {
		if kb := residentKB(t, filepath.Join(dir, name)); kb > 64 {
			t.Errorf("%s: %d KiB resident after 30 searches", name, kb)
		}
	}
	if kb := residentKB(t, filepath.Join(dir, "q4")); kb < 30000*32/1024 {
		t.Errorf("q4: %d KiB resident, want the whole file", kb)
	}
}

// TestPartitionResidentSet: a partitioned index keeps the q4 file out of
// the resident set (Open gives back what it verified; a search reads the
// q4 rows outside the partition only), and of the ivf file the lists its
// searches probed, which ReleaseMemory gives back.
func TestPartitionResidentSet(t *testing.T) {
	const d = 100
	dir := t.TempDir()
	o := partOpts(d, 1)
	o.ListRows = 1000
	x := open(t, dir, o)
	mustApply(t, x, docsDims(1, 60000, d), nil, 1)
	mustClose(t, x)
	x = openPart(t, dir, o)
	defer x.Close()
	dir, _ = filepath.Abs(dir)
	if kb := residentKB(t, filepath.Join(dir, "ivf")); kb > 0 {
		t.Errorf("ivf: %d KiB resident after Open", kb)
	}
	for _, q := range docsDims(2, 3, d) {
		if _, err := x.Search(q.Vector, x.RescoreCandidates(10)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"slots", "matrix", "q4"} {
		if kb := residentKB(t, filepath.Join(dir, name)); kb > 64 {
			t.Errorf("%s: %d KiB resident after 3 searches", name, kb)
		}
	}
	whole := 60000 * 64 / 1024
	p := filepath.Join(dir, "ivf")
	if kb := residentKB(t, p); kb == 0 || kb > whole/2 {
		t.Errorf("ivf: %d KiB resident after 3 searches of about 2 lists of 60, want some and less than %d", kb, whole/2)
	}
	if err := x.ReleaseMemory(); err != nil {
		t.Fatal(err)
	}
	if kb := residentKB(t, p); kb > 0 {
		t.Errorf("ivf: %d KiB resident after ReleaseMemory", kb)
	}
}
