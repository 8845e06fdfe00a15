package vecfile_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/vecfile"
)

// int8PartOpts are the options of an Int8Rescore index with no q4 file
// that partitions its int8 rows from 100 rows, lists of about 16 rows,
// probing probes of them.
func int8PartOpts(d, probes int) *vecfile.Options {
	return &vecfile.Options{Dims: d, Format: vecfile.Int8Rescore, QuickAbove: -1, Int8PartitionAbove: 100, Int8ListRows: 16, Int8Probes: probes}
}

// int8ScanOpts are those of its twin that scans every int8 row.
func int8ScanOpts(d int) *vecfile.Options {
	return &vecfile.Options{Dims: d, Format: vecfile.Int8Rescore, QuickAbove: -1, Int8PartitionAbove: -1}
}

// noDeleted fails if a search of x returns one of the ids dels.
func noDeleted(t *testing.T, x *vecfile.Index, qs []engine.VectorDoc, dels []uint64) {
	t.Helper()
	for _, q := range qs {
		for _, k := range []int{10, 1 << 20} {
			hits, err := x.Search(q.Vector, k)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if slices.Contains(dels, h.ID) {
					t.Fatalf("deleted id %d returned (k %d)", h.ID, k)
				}
			}
		}
	}
}

// exists reports whether the file name of dir exists.
func exists(t *testing.T, dir, name string) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(dir, name))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// TestInt8PartitionMatchesScan: with every list probed, the partition of
// the int8 rows finds what the int8 scan of every row finds, hit for hit
// (ids, scores, order), unfiltered and filtered (matchFilters, which
// scan every row), through appends past the build, replacements and
// deletions (a deleted id is never returned), a reopen that finds the
// rows changed since the build, a compaction, and a reopen with the q4
// file (the ivf8 file is removed). With one list probed its candidates
// differ: the partition is searched. A new index, and one below the
// threshold, keep no ivf8 file.
func TestInt8PartitionMatchesScan(t *testing.T) {
	defer vecfile.SetInt8MinShare(vecfile.SetInt8MinShare(0))
	for _, d := range []int{16, 100} {
		t.Run(fmt.Sprint(d, "dims"), func(t *testing.T) {
			dp, di := t.TempDir(), t.TempDir()
			all := int8PartOpts(d, 1<<16)
			px, ref := openPart(t, dp, all), openPart(t, di, int8ScanOpts(d))
			defer ref.Close()
			ds := docsDims(1, 3000, d)
			for _, x := range []*vecfile.Index{px, ref} {
				mustApply(t, x, ds[:2000], nil, 1)
			}
			if exists(t, dp, "ivf8") || px.Partitioned() {
				t.Fatal("a new index has a partition")
			}
			mustClose(t, px)
			px = openPart(t, dp, all)
			if !px.Partitioned() || !exists(t, dp, "ivf8") || exists(t, dp, "ivf") || exists(t, dp, "q4") {
				t.Fatalf("after the Open's build: partitioned %v, files ivf8 %v ivf %v q4 %v", px.Partitioned(),
					exists(t, dp, "ivf8"), exists(t, dp, "ivf"), exists(t, dp, "q4"))
			}
			if st, err := os.Stat(filepath.Join(dp, "ivf8")); err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("ivf8: %v %v", st, err)
			}
			qs := append(docsDims(3, 24, d), ds[100:106]...)
			sameAsQuick(t, "built", px, ref, qs)
			repl := docsDims(2, 50, d)
			for i := range repl {
				repl[i].ID = uint64(7*i + 1)
			}
			dels := []uint64{4, 10, 1500, 101, 102}
			for _, x := range []*vecfile.Index{px, ref} {
				mustApply(t, x, ds[2000:2100], nil, 2)
				mustApply(t, x, repl, dels, 3)
			}
			qs = append(qs, repl[:6]...)
			sameAsQuick(t, "applied", px, ref, qs)
			noDeleted(t, px, qs, dels)
			mustClose(t, px)
			before, err := os.ReadFile(filepath.Join(dp, "ivf8"))
			if err != nil {
				t.Fatal(err)
			}
			px = open(t, dp, all)
			if !px.Partitioned() {
				t.Fatal("the reopen does not find the partition")
			}
			sameAsQuick(t, "reopened", px, ref, qs)
			noDeleted(t, px, qs, dels)
			if after, _ := os.ReadFile(filepath.Join(dp, "ivf8")); !slices.Equal(before, after) {
				t.Fatal("the reopen rebuilt the partition")
			}
			mustClose(t, px)
			one := int8PartOpts(d, 1)
			px = open(t, dp, one)
			if differs(t, px, ref, qs) == 0 {
				t.Fatal("one list probed finds what every row does: the partition is not searched")
			}
			noDeleted(t, px, qs, dels)
			mustClose(t, px)
			px = open(t, dp, all)
			for _, x := range []*vecfile.Index{px, ref} {
				if err := x.Compact(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			vecfile.WaitPartition(px)
			if !px.Partitioned() {
				t.Fatal("no partition after the compaction")
			}
			sameAsQuick(t, "compacted", px, ref, qs)
			noDeleted(t, px, qs, dels)
			mustClose(t, px)
			q4 := *all
			q4.QuickAbove = 100
			px = openPart(t, dp, &q4)
			if exists(t, dp, "ivf8") {
				t.Fatal("an index with a q4 file keeps the ivf8 file")
			}
			mustClose(t, px)
			below := *all
			below.QuickAbove, below.Int8PartitionAbove = -1, 1<<20
			px = openPart(t, dp, &below)
			if px.Partitioned() || exists(t, dp, "ivf8") || exists(t, dp, "ivf") {
				t.Fatal("an index below the threshold keeps a partition")
			}
			mustClose(t, px)
		})
	}
}

// copyDir copies the files of src into a new directory, as a crash would
// leave them.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestInt8PartitionBuildStops: a writable Open returns before the build
// of the partition of the int8 rows; until it is installed searches are
// the scan of every row. The files as a crash during the build leaves
// them (copied while it is held) open, read-only and writable, and
// answer exactly; Close during the build stops it and leaves no
// goroutine and no partition a read-only Open uses; a later writable
// Open builds it, and FinishBuilds builds it for an index grown past the
// threshold while open.
func TestInt8PartitionBuildStops(t *testing.T) {
	defer vecfile.SetInt8MinShare(vecfile.SetInt8MinShare(0))
	const d = 100
	for _, stage := range []string{"start", "written"} {
		t.Run(stage, func(t *testing.T) {
			dp, di := t.TempDir(), t.TempDir()
			px, ref := open(t, dp, int8PartOpts(d, 1)), open(t, di, int8ScanOpts(d))
			defer ref.Close()
			ds := docsDims(1, 2000, d)
			for _, x := range []*vecfile.Index{px, ref} {
				mustApply(t, x, ds, nil, 1)
			}
			mustClose(t, px)
			qs := docsDims(3, 12, d)
			runtime.GC()
			goroutines := runtime.NumGoroutine()
			g := gateBuilds(t, dp, stage)
			px = openReturns(t, dp, int8PartOpts(d, 1))
			g.wait(t, stage)
			if px.Partitioned() {
				t.Fatal("partitioned before the build ended")
			}
			sameAsQuick(t, "during the build", px, ref, qs)
			crash := copyDir(t, dp)
			ro := int8PartOpts(d, 1)
			ro.ReadOnly = true
			for _, o := range []*vecfile.Options{ro, int8PartOpts(d, 1)} {
				c := openPart(t, crash, o)
				if o.ReadOnly && c.Partitioned() {
					t.Fatal("a read-only Open of the crashed build's files uses its partition")
				}
				if o.ReadOnly {
					sameAsQuick(t, "crashed, read-only", c, ref, qs)
				} else if !c.Partitioned() {
					t.Fatal("a writable Open of the crashed build's files does not build the partition")
				}
				noDeleted(t, c, qs, nil)
				mustClose(t, c)
			}
			mustClose(t, px)
			deadline := time.Now().Add(5 * time.Second)
			for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > goroutines {
				t.Fatalf("%d goroutines after Close, %d before Open", n, goroutines)
			}
			r := open(t, dp, ro)
			if r.Partitioned() {
				t.Fatal("a read-only Open after Close uses a partition")
			}
			sameAsQuick(t, "closed during the build, read-only", r, ref, qs)
			mustClose(t, r)
			all := int8PartOpts(d, 1<<16)
			px = openPart(t, dp, all)
			if !px.Partitioned() {
				t.Fatal("no partition after a later Open's build")
			}
			sameAsQuick(t, "built later", px, ref, qs)
			mustClose(t, px)
		})
	}
	t.Run("finish", func(t *testing.T) {
		dp, di := t.TempDir(), t.TempDir()
		o := int8PartOpts(d, 1<<16)
		o.Int8PartitionAbove = 1000
		px, ref := open(t, dp, o), open(t, di, int8ScanOpts(d))
		defer ref.Close()
		for _, x := range []*vecfile.Index{px, ref} {
			mustApply(t, x, docsDims(1, 1500, d), nil, 1)
		}
		if px.Partitioned() {
			t.Fatal("partitioned before FinishBuilds")
		}
		if calls, err := finish(t, context.Background(), px); err != nil || calls == 0 {
			t.Fatalf("FinishBuilds: %v, %d progress calls", err, calls)
		}
		if !px.Partitioned() {
			t.Fatal("not partitioned after FinishBuilds")
		}
		mustClose(t, px)
		px = noBuildAtOpen(t, dp, o)
		defer px.Close()
		sameAsQuick(t, "finished", px, ref, docsDims(3, 12, d))
	})
}

// TestInt8PartitionPartsMatchScan: past vecscan.ParallelAbove rows the
// partition's scan is split into parts, each starting at its share of
// the nearest lists; with every list probed it finds what the int8 scan
// of every row finds, hit for hit, with 1 to 4 parts, also with rows
// appended past the build (scanned after the lists) and deleted ones.
func TestInt8PartitionPartsMatchScan(t *testing.T) {
	defer vecfile.SetInt8MinShare(vecfile.SetInt8MinShare(0))
	const d, n = 16, 36000
	dp, di := t.TempDir(), t.TempDir()
	o := int8PartOpts(d, 1<<16)
	o.Int8ListRows = 120
	px, ref := openPart(t, dp, o), openPart(t, di, int8ScanOpts(d))
	defer ref.Close()
	ds := docsDims(5, n+300, d)
	for _, x := range []*vecfile.Index{px, ref} {
		mustApply(t, x, ds[:n], nil, 1)
	}
	mustClose(t, px)
	px = openPart(t, dp, o)
	defer px.Close()
	if !px.Partitioned() {
		t.Fatal("no partition")
	}
	qs := append(docsDims(6, 12, d), ds[7], ds[n-1])
	check := func(label string) {
		t.Helper()
		for _, procs := range []int{1, 2, 3, 4} {
			old := runtime.GOMAXPROCS(procs)
			for _, q := range qs {
				for _, k := range []int{1, 10, 100} {
					c := ref.RescoreCandidates(k)
					want, err := ref.Search(q.Vector, c)
					if err != nil {
						t.Fatal(err)
					}
					got, err := px.Search(q.Vector, c)
					if err != nil {
						t.Fatal(err)
					}
					sameHits(t, fmt.Sprintf("%s, %d procs, k %d", label, procs, k), got, want)
				}
			}
			runtime.GOMAXPROCS(old)
		}
	}
	check("built")
	for _, x := range []*vecfile.Index{px, ref} {
		mustApply(t, x, ds[n:], []uint64{3, 900, 20000}, 2)
	}
	check("appended")
}
