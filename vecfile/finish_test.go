package vecfile_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/vecfile"
)

// finish runs FinishBuilds and checks its progress: never backwards,
// never past the total, and at the total when it returns nil after a
// build. It returns the calls.
func finish(t *testing.T, ctx context.Context, x *vecfile.Index) (int, error) {
	t.Helper()
	calls := 0
	var last, total int64
	err := x.FinishBuilds(ctx, func(done, tot int64) {
		if done < last || done > tot || tot <= 0 || (total != 0 && tot != total) {
			t.Errorf("progress %d of %d after %d of %d", done, tot, last, total)
		}
		calls++
		last, total = done, tot
	})
	if err == nil && calls > 0 && last != total {
		t.Errorf("progress ends at %d of %d", last, total)
	}
	return calls, err
}

// noBuildAtOpen opens dir with o and fails if the Open starts a build
// of the partition, or does not find one.
func noBuildAtOpen(t *testing.T, dir string, o *vecfile.Options) *vecfile.Index {
	t.Helper()
	g := gateBuilds(t, dir, "start")
	x := openReturns(t, dir, o)
	select {
	case <-g.reached:
		t.Fatal("the Open after FinishBuilds builds the partition again")
	default:
	}
	if !x.Partitioned() {
		t.Fatal("the Open after FinishBuilds finds no partition")
	}
	return x
}

// TestFinishBuilds: an index grown past the thresholds while open (no q4
// file, no partition at its Open) gets both from FinishBuilds, which
// waits for the partition and reports its progress; so does an index
// whose rows outside the partition passed a tenth of those in it, and
// one whose live rows more than doubled (Open would rebuild the q4 file
// around their new centre, and so the partition). The
// next Open finds them built and starts no build, and every list probed
// finds what the 4-bit pass over every row does. An index that needs
// nothing returns at once.
func TestFinishBuilds(t *testing.T) {
	const d = 100
	ctx := context.Background()
	qs := docsDims(3, 12, d)
	for _, tc := range []struct {
		name       string
		first, add int // rows before the Open that FinishBuilds follows, rows applied after it
		build      bool
	}{
		{"grown from empty", 0, 2000, true},
		{"tail over a tenth", 2000, 300, true},
		{"q4 centre of too few rows", 2000, 2500, true},
		{"tail under a tenth", 2000, 100, false},
		{"below the thresholds", 0, 60, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dp, dq := t.TempDir(), t.TempDir()
			ds := docsDims(1, tc.first+tc.add, d)
			px, q4 := open(t, dp, partOpts(d, 1)), open(t, dq, quickOpts(d))
			for _, x := range []*vecfile.Index{px, q4} {
				mustApply(t, x, ds[:tc.first], nil, 1)
				mustClose(t, x)
			}
			px = open(t, dp, partOpts(d, 1))
			vecfile.WaitPartition(px)
			g := gateBuilds(t, dp, "start")
			for _, x := range []*vecfile.Index{px} {
				mustApply(t, x, ds[tc.first:], nil, 2)
			}
			q4 = open(t, dq, quickOpts(d))
			mustApply(t, q4, ds[tc.first:], nil, 2)
			mustClose(t, q4)
			q4 = open(t, dq, quickOpts(d)) // its q4 file over every row
			defer q4.Close()
			if tc.build {
				close(g.release["start"])
			}
			calls, err := finish(t, ctx, px)
			if err != nil {
				t.Fatal(err)
			}
			built := len(g.reached) > 0
			if built != tc.build || (calls > 0) != tc.build {
				t.Fatalf("FinishBuilds built %v (%d progress calls), want %v", built, calls, tc.build)
			}
			if !tc.build {
				mustClose(t, px)
				return
			}
			if !px.Partitioned() {
				t.Fatal("not partitioned after FinishBuilds")
			}
			if differs(t, px, q4, qs) == 0 {
				t.Fatal("one list probed finds what every row does: the partition is not searched")
			}
			if calls, err := finish(t, ctx, px); err != nil || calls != 0 {
				t.Fatalf("FinishBuilds again: %d progress calls, %v", calls, err)
			}
			mustClose(t, px)
			px = noBuildAtOpen(t, dp, partOpts(d, 1<<16))
			defer px.Close()
			sameAsQuick(t, "reopened", px, q4, qs)
		})
	}
}

// TestFinishBuildsStops: FinishBuilds returns ctx's error when ctx ends
// before the build, which goes on until Close stops it; a read-only or
// closed index.
func TestFinishBuildsStops(t *testing.T) {
	const d = 100
	dp, _ := partitionPair(t, d)
	g := gateBuilds(t, dp, "start")
	px := openReturns(t, dp, partOpts(d, 1))
	g.wait(t, "start")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := finish(t, ctx, px); !errors.Is(err, context.Canceled) {
		t.Fatalf("FinishBuilds with its context ended: %v, want context.Canceled", err)
	}
	mustClose(t, px) // stops the build held at "start"
	if err := px.FinishBuilds(context.Background(), nil); !errors.Is(err, vecfile.ErrClosed) {
		t.Fatalf("FinishBuilds after Close: %v, want ErrClosed", err)
	}
	ro := partOpts(d, 1)
	ro.ReadOnly = true
	r := open(t, dp, ro)
	defer r.Close()
	if calls, err := finish(t, context.Background(), r); err != nil || calls != 0 || r.Partitioned() {
		t.Fatalf("FinishBuilds of a read-only index without a partition: %d progress calls, %v, partitioned %v", calls, err, r.Partitioned())
	}
}

// TestNoBackgroundBuild: an Open with NoBackgroundBuild of an index that
// lacks its partition (of the 4-bit rows, or of the int8 rows) starts no
// build; its searches scan every row and answer as the index without a
// partition does. FinishBuilds builds the partition, and the next Open,
// with the option or without, finds it and starts no build.
func TestNoBackgroundBuild(t *testing.T) {
	const d = 100
	ctx := context.Background()
	qs := docsDims(3, 12, d)
	for _, tc := range []struct {
		name       string
		opts, scan func() *vecfile.Options
	}{
		{"4-bit rows", func() *vecfile.Options { return partOpts(d, 1) }, func() *vecfile.Options { return quickOpts(d) }},
		{"int8 rows", func() *vecfile.Options { return int8PartOpts(d, 1) }, func() *vecfile.Options { return int8ScanOpts(d) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dp, ds := t.TempDir(), t.TempDir()
			docs := docsDims(1, 2000, d)
			// Filled while open: no partition at its Open, none built.
			px, sx := open(t, dp, tc.opts()), open(t, ds, tc.scan())
			mustApply(t, px, docs, nil, 1)
			mustApply(t, sx, docs, nil, 1)
			mustClose(t, px)
			mustClose(t, sx)
			sx = open(t, ds, tc.scan())
			defer sx.Close()
			g := gateBuilds(t, dp, "start")
			o := tc.opts()
			o.NoBackgroundBuild = true
			px = openReturns(t, dp, o)
			for _, q := range qs {
				got, err := px.Search(q.Vector, 10)
				if err != nil {
					t.Fatal(err)
				}
				want, err := sx.Search(q.Vector, 10)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("query %d: %v without the partition, %v scanning every row", q.ID, got, want)
				}
			}
			if px.Partitioned() {
				t.Fatal("partitioned at an Open without builds in the background")
			}
			select {
			case <-g.reached:
				t.Fatal("an Open without builds in the background started one")
			default:
			}
			close(g.release["start"])
			if _, err := finish(t, ctx, px); err != nil {
				t.Fatal(err)
			}
			if !px.Partitioned() {
				t.Fatal("not partitioned after FinishBuilds")
			}
			mustClose(t, px)
			noBuildAtOpen(t, dp, o).Close()
			noBuildAtOpen(t, dp, tc.opts()).Close()
		})
	}
}
