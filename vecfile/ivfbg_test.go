package vecfile_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/vecfile"
)

// buildGate holds the first build of the partition of dir at each of its
// stages until the test lets it go (or the build is asked to stop).
type buildGate struct {
	dir     string
	release map[string]chan struct{}
	reached chan string
	mu      sync.Mutex
	seen    map[string]bool
}

func gateBuilds(t *testing.T, dir string, stages ...string) *buildGate {
	g := &buildGate{dir: dir, release: map[string]chan struct{}{}, reached: make(chan string, len(stages)), seen: map[string]bool{}}
	for _, s := range stages {
		g.release[s] = make(chan struct{})
	}
	vecfile.SetBuildHook(func(d, stage string, stop <-chan struct{}) {
		rel, ok := g.release[stage]
		if d != g.dir || !ok {
			return
		}
		g.mu.Lock()
		first := !g.seen[stage]
		g.seen[stage] = true
		g.mu.Unlock()
		if !first {
			return
		}
		g.reached <- stage
		select {
		case <-rel:
		case <-stop:
		}
	})
	t.Cleanup(func() { vecfile.SetBuildHook(nil) })
	return g
}

// wait waits for the build to reach stage.
func (g *buildGate) wait(t *testing.T, stage string) {
	t.Helper()
	select {
	case s := <-g.reached:
		if s != stage {
			t.Fatalf("the build reached %q, want %q", s, stage)
		}
	case <-time.After(time.Minute):
		t.Fatalf("the build never reached %q", stage)
	}
}

// openReturns opens dir and fails if Open has not returned in a minute:
// held by the gate, a build inside Open would never end.
func openReturns(t *testing.T, dir string, o *vecfile.Options) *vecfile.Index {
	t.Helper()
	type res struct {
		x   *vecfile.Index
		err error
	}
	ch := make(chan res, 1)
	go func() {
		x, err := vecfile.Open(dir, o)
		ch <- res{x, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.x
	case <-time.After(time.Minute):
		t.Fatal("Open waits for the build of the partition")
		return nil
	}
}

// partitionPair is an index of 2000 rows above the partition's
// threshold, whose Open builds its partition, and its twin that scans
// every q4 row.
func partitionPair(t *testing.T, d int) (dp string, q4 *vecfile.Index) {
	dp, dq := t.TempDir(), t.TempDir()
	px, q4 := open(t, dp, partOpts(d, 1)), open(t, dq, quickOpts(d))
	for _, x := range []*vecfile.Index{px, q4} {
		mustApply(t, x, docsDims(1, 2000, d), nil, 1)
		mustClose(t, x)
	}
	q4 = open(t, dq, quickOpts(d)) // with its q4 file
	t.Cleanup(func() { q4.Close() })
	return dp, q4
}

// differs counts the queries whose candidates from x are not q4's.
func differs(t *testing.T, x, q4 *vecfile.Index, qs []engine.VectorDoc) int {
	t.Helper()
	n := 0
	for _, q := range qs {
		c := q4.RescoreCandidates(10)
		a, err := x.Search(q.Vector, c)
		if err != nil {
			t.Fatal(err)
		}
		b, err := q4.Search(q.Vector, c)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, b) {
			n++
		}
	}
	return n
}

// TestPartitionBuildsInBackground: a writable Open that must build the
// partition returns before the build does; until the build installs it,
// searches are the 4-bit pass over every row, through appends,
// replacements and deletions; after, they go through the partition (one
// list probed: they differ), and a row rewritten while the build copied
// it, then back, is out of it. A later Open finds the file finished.
func TestPartitionBuildsInBackground(t *testing.T) {
	const d = 100
	dp, q4 := partitionPair(t, d)
	qs := docsDims(3, 24, d)
	g := gateBuilds(t, dp, "start", "written")
	px := openReturns(t, dp, partOpts(d, 1))
	defer px.Close()
	g.wait(t, "start")
	if px.Partitioned() {
		t.Fatal("partitioned before the build ran")
	}
	sameAsQuick(t, "before the build", px, q4, qs)
	ds := docsDims(1, 2100, d)
	repl := docsDims(2, 50, d)
	for i := range repl {
		repl[i].ID = uint64(7*i + 1)
	}
	// Row 500 (id 501) as B while the build copies it, then A again.
	a := ds[500]
	b := docsDims(9, 1, d)[0]
	b.ID, b.Time, b.Scope, b.Session = a.ID, a.Time, a.Scope, a.Session
	for _, x := range []*vecfile.Index{px, q4} {
		mustApply(t, x, ds[2000:], nil, 2)
		mustApply(t, x, repl, []uint64{4, 10, 1500}, 3)
		mustApply(t, x, []engine.VectorDoc{b}, nil, 4)
	}
	sameAsQuick(t, "applied before the build", px, q4, qs)
	close(g.release["start"])
	g.wait(t, "written")
	for _, x := range []*vecfile.Index{px, q4} {
		mustApply(t, x, []engine.VectorDoc{a}, nil, 5)
	}
	if px.Partitioned() {
		t.Fatal("partitioned before the header was written")
	}
	sameAsQuick(t, "written", px, q4, qs)
	close(g.release["written"])
	vecfile.WaitPartition(px)
	if !px.Partitioned() {
		t.Fatal("not partitioned after the build")
	}
	if differs(t, px, q4, qs) == 0 {
		t.Fatal("one list probed after the build finds what every row does: the partition is not searched")
	}
	mustClose(t, px)
	before, err := os.ReadFile(filepath.Join(dp, "ivf"))
	if err != nil {
		t.Fatal(err)
	}
	px = open(t, dp, partOpts(d, 1<<16))
	if !px.Partitioned() {
		t.Fatal("a later Open does not find the finished partition")
	}
	sameAsQuick(t, "reopened", px, q4, append(qs, a))
	if after, _ := os.ReadFile(filepath.Join(dp, "ivf")); !slices.Equal(before, after) {
		t.Fatal("a later Open rebuilt the partition")
	}
}

// TestPartitionBuildStops: Close or Compact during a build stops it and
// waits for it; Close leaves no goroutine and no file a read-only Open
// accepts; a later writable Open builds it again. Compact starts a build
// of the compacted rows.
func TestPartitionBuildStops(t *testing.T) {
	const d = 100
	for _, tc := range []struct {
		stage   string
		compact bool
	}{{"start", false}, {"written", false}, {"start", true}, {"written", true}} {
		name := tc.stage
		if tc.compact {
			name += " compact"
		}
		t.Run(name, func(t *testing.T) {
			dp, q4 := partitionPair(t, d)
			qs := docsDims(3, 12, d)
			runtime.GC()
			goroutines := runtime.NumGoroutine()
			g := gateBuilds(t, dp, tc.stage)
			px := openReturns(t, dp, partOpts(d, 1))
			g.wait(t, tc.stage)
			if tc.compact {
				mustApply(t, px, nil, []uint64{1, 2, 3}, 2)
				mustApply(t, q4, nil, []uint64{1, 2, 3}, 2)
				for _, x := range []*vecfile.Index{px, q4} {
					if err := x.Compact(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				vecfile.WaitPartition(px)
				if !px.Partitioned() {
					t.Fatal("no partition after the compaction's build")
				}
				if differs(t, px, q4, qs) == 0 {
					t.Fatal("the compaction's partition is not searched")
				}
			}
			mustClose(t, px)
			deadline := time.Now().Add(5 * time.Second)
			for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > goroutines {
				t.Fatalf("%d goroutines after Close, %d before Open", n, goroutines)
			}
			ro := partOpts(d, 1)
			ro.ReadOnly = true
			r := open(t, dp, ro)
			if r.Partitioned() != tc.compact {
				t.Fatalf("read-only Open after Close: partitioned %v, want %v", r.Partitioned(), tc.compact)
			}
			mustClose(t, r)
			px = open(t, dp, partOpts(d, 1))
			vecfile.WaitPartition(px)
			if !px.Partitioned() {
				t.Fatal("no partition after a later Open's build")
			}
			mustClose(t, px)
			r = open(t, dp, ro)
			defer r.Close()
			if !r.Partitioned() {
				t.Fatal("a read-only Open does not find the finished partition")
			}
		})
	}
}
