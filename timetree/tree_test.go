package timetree_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/timetree"
)

var t0 = time.Date(2023, 5, 1, 10, 0, 0, 0, time.UTC) // a Monday

func day(d int) time.Time { return t0.AddDate(0, 0, d) }

func TestConsolidation(t *testing.T) {
	a := []float32{1, 0, 0}
	near := []float32{0.9, 0.3, 0}  // cos 0.95 to a
	mid := []float32{0.75, 0.66, 0} // cos ~0.75 to a
	far := []float32{0, 0, 1}
	for _, tc := range []struct {
		name string
		add  []struct {
			at  time.Time
			vec []float32
		}
		// want[i] lists record i's ancestors as indexes of first
		// appearance, level by level, so ids need not be known.
		sameParent  [][2]int // records sharing their first-level node
		otherParent [][2]int
		sameAt      [][3]int // records i, j sharing the node at level l
	}{
		{name: "similar records of one week share a node",
			add: []struct {
				at  time.Time
				vec []float32
			}{{day(0), a}, {day(3), near}},
			sameParent: [][2]int{{0, 1}}},
		{name: "below 0.8 they do not, but meet a level up (0.7)",
			add: []struct {
				at  time.Time
				vec []float32
			}{{day(0), a}, {day(1), mid}},
			otherParent: [][2]int{{0, 1}}, sameAt: [][3]int{{0, 1, 1}}},
		{name: "unrelated records stay apart to the top",
			add: []struct {
				at  time.Time
				vec []float32
			}{{day(0), a}, {day(1), far}},
			otherParent: [][2]int{{0, 1}}},
		{name: "another week is another window",
			add: []struct {
				at  time.Time
				vec []float32
			}{{day(0), a}, {day(7), a}},
			otherParent: [][2]int{{0, 1}}, sameAt: [][3]int{{0, 1, 1}}},
		{name: "another year is another root",
			add: []struct {
				at  time.Time
				vec []float32
			}{{day(0), a}, {day(400), a}},
			otherParent: [][2]int{{0, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := timetree.New(nil)
			var ids []uint64
			for i, x := range tc.add {
				id := uint64(i + 1)
				if err := tr.Add(id, "s", x.at, x.vec); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			info := tr.Info(ids)
			for _, p := range tc.sameParent {
				if info[p[0]].Nodes[0] == 0 || info[p[0]].Nodes[0] != info[p[1]].Nodes[0] {
					t.Errorf("records %d and %d: parents %v, want one", p[0], p[1], [2]uint64{info[p[0]].Nodes[0], info[p[1]].Nodes[0]})
				}
			}
			for _, p := range tc.otherParent {
				if info[p[0]].Nodes[0] == info[p[1]].Nodes[0] {
					t.Errorf("records %d and %d share parent %d", p[0], p[1], info[p[0]].Nodes[0])
				}
			}
			for _, s := range tc.sameAt {
				if info[s[0]].Nodes[s[2]] != info[s[1]].Nodes[s[2]] {
					t.Errorf("records %d and %d do not meet at level %d: %v %v", s[0], s[1], s[2]+1, info[s[0]].Nodes, info[s[1]].Nodes)
				}
			}
			if len(tc.sameAt) == 0 && len(tc.otherParent) > 0 {
				if reflect.DeepEqual(info[0].Nodes[2], info[1].Nodes[2]) {
					t.Errorf("unrelated records share a root %d", info[0].Nodes[2])
				}
			}
		})
	}
}

func TestRemoveAndSummary(t *testing.T) {
	tr := timetree.New(nil)
	texts := map[uint64]string{1: "we went camping", 2: "camping by the lake", 3: "a secret Zebraquokka"}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tr.Add(1, "s", day(0), []float32{1, 0.3}))
	must(tr.Add(2, "s", day(1), []float32{1, 0}))
	must(tr.Add(3, "s", day(2), []float32{1, 0.1}))
	info := tr.Info([]uint64{1, 2, 3})
	p := info[0].Nodes[0]
	if info[1].Nodes[0] != p || info[2].Nodes[0] != p || info[0].N != 3 || !info[0].Last.Equal(day(2)) {
		t.Fatalf("three close records: %+v", info)
	}
	text := func(id uint64) (string, bool) { s, ok := texts[id]; return s, ok }
	if got := tr.Summary(p, 200, text); got != "a secret Zebraquokka camping by the lake we went camping" {
		t.Fatalf("summary %q: the records closest to the centroid first", got)
	}
	if got := tr.Summary(p, 10, text); got != "a secret Z" {
		t.Fatalf("summary within 10 runes: %q", got)
	}
	tr.Remove(3)
	delete(texts, 3)
	got := tr.Leaves(p)
	if len(got) != 2 || got[0]+got[1] != 3 {
		t.Fatalf("leaves after Remove: %v, want 1 and 2", got)
	}
	if s := tr.Summary(p, 200, text); strings.Contains(s, "Zebraquokka") || len(s) != len("camping by the lake we went camping") {
		t.Fatalf("summary after Remove: %q", s)
	}
	tr.Remove(1)
	tr.Remove(2)
	if n := tr.Nodes("s"); len(n) != 0 || tr.Len() != 0 {
		t.Fatalf("an empty tree keeps nodes %v", n)
	}
	if err := tr.Add(4, "s", day(0), []float32{1, 0, 0}); err != timetree.ErrDims {
		t.Fatalf("a vector of other dimensions: %v, want ErrDims", err)
	}
}

// TestOnlineEqualsRebuild checks that a tree built record by record is
// the tree a rebuild in id order gives, as the engine relies on.
func TestOnlineEqualsRebuild(t *testing.T) {
	vecs := [][]float32{{1, 0}, {0.9, 0.4}, {0, 1}, {0.2, 1}, {1, 0.1}, {0.7, 0.7}}
	build := func() []timetree.Node {
		tr := timetree.New(nil)
		for i, v := range vecs {
			if err := tr.Add(uint64(i+1), "s", day(i*3), v); err != nil {
				t.Fatal(err)
			}
		}
		return tr.Nodes("s")
	}
	a, b := build(), build()
	if !reflect.DeepEqual(a, b) || len(a) < 3 {
		t.Fatalf("two builds differ or are trivial:\n%v\n%v", a, b)
	}
}

// BenchmarkAdd adds records of one scope, ten a day, with 256-dimension
// vectors on a few topics, to a tree of 5,000 records.
func BenchmarkAdd(b *testing.B) {
	const dims, n = 256, 5000
	vec := func(i int) []float32 {
		v := make([]float32, dims)
		v[i%7] = 1
		v[(i*13)%dims] += 0.5
		return v
	}
	tr := timetree.New(nil)
	for i := range n {
		if err := tr.Add(uint64(i+1), "s", day(i/10), vec(i)); err != nil {
			b.Fatal(err)
		}
	}
	i := n
	for b.Loop() {
		i++
		if err := tr.Add(uint64(i), "s", day(i/10), vec(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// A new leaf is compared with the newest ScanNodes nodes of its window
// only, so that an insert costs the same however many nodes the window
// holds: a day of 30,000 dissimilar agent notes took minutes to import
// when every insert scanned the whole window. A leaf that matches only an
// older node opens a node of its own; one that matches a recent node
// joins it.
func TestInsertScansRecentNodesOnly(t *testing.T) {
	const dims = timetree.ScanNodes + 2
	basis := func(i int) []float32 {
		v := make([]float32, dims)
		v[i] = 1
		return v
	}
	tr := timetree.New(nil)
	// ScanNodes+1 mutually orthogonal leaves in one week: each opens its
	// own first-level node.
	for i := 0; i <= timetree.ScanNodes; i++ {
		if err := tr.Add(uint64(i+1), "s", day(0), basis(i)); err != nil {
			t.Fatal(err)
		}
	}
	old := uint64(1)                         // its node is now beyond the scan
	recent := uint64(timetree.ScanNodes + 1) // its node is the newest
	if err := tr.Add(100, "s", day(1), basis(0)); err != nil {
		t.Fatal(err)
	}
	if err := tr.Add(101, "s", day(1), basis(timetree.ScanNodes)); err != nil {
		t.Fatal(err)
	}
	parent := func(id uint64) uint64 { return tr.Info([]uint64{id})[0].Nodes[0] }
	if parent(100) == parent(old) {
		t.Errorf("a leaf joined a node older than the newest %d of its window", timetree.ScanNodes)
	}
	if parent(101) != parent(recent) {
		t.Errorf("a leaf matching the newest node did not join it")
	}
}
