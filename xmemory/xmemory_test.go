package xmemory_test

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/xmemory"
)

func vec(xs ...float32) []float32 { return xs }

func TestObjective(t *testing.T) {
	a, b, c := vec(1, 0, 0), vec(0, 1, 0), vec(0, 0, 1)
	cases := []struct {
		name   string
		groups [][][]float32
		sparse float64
		want   float64
	}{
		// Two equal, fully cohesive themes: sparsity 4²/(2·8) = 1;
		// equal nearest-neighbour similarities put both at the bell's
		// top, so SemScore is the cohesion 1.
		{"balanced", [][][]float32{{a, a}, {b, b}}, 1, 2},
		// Sizes 3 and 1: sparsity 16/(2·10) = 0.8.
		{"unbalanced", [][][]float32{{a, a, a}, {b}}, 0.8, 1.8},
		// One theme of two orthogonal facts: sparsity 1, cohesion
		// cos 45° = 0.7071.
		{"one mixed theme", [][][]float32{{a, b}}, 1, 1 + math.Sqrt(0.5)},
		// Three themes: c is nearer to none; all s_k are 0, g = 1.
		{"three", [][][]float32{{a}, {b}, {c}}, 1, 2},
		{"empty", nil, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.groups != nil {
				if got := xmemory.Sparsity(tc.groups); math.Abs(got-tc.sparse) > 1e-9 {
					t.Errorf("Sparsity = %v, want %v", got, tc.sparse)
				}
			}
			if got := xmemory.Objective(tc.groups); math.Abs(got-tc.want) > 1e-6 {
				t.Errorf("Objective = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSemanticPenalisesOutliers: a theme whose nearest-neighbour
// similarity is far from the median gets a small bell weight, so SemScore
// falls below the mean cohesion.
func TestSemanticPenalisesOutliers(t *testing.T) {
	g := [][][]float32{{vec(1, 0, 0)}, {vec(0.99, 0.14, 0)}, {vec(0.97, 0.24, 0)}, {vec(0, 0, 1)}}
	if s := xmemory.Semantic(g); s >= 0.99 {
		t.Errorf("Semantic = %v, want an isolated theme to cost", s)
	}
}

func clustered(rng *rand.Rand, centres [][]float32, n int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		c := centres[i%len(centres)]
		v := make([]float32, len(c))
		for j := range v {
			v[j] = c[j] + float32(rng.NormFloat64()*0.05)
		}
		out[i] = v
	}
	return out
}

func checkInvariants(t *testing.T, p *xmemory.Partition, facts map[uint64]bool) {
	t.Helper()
	seen := map[uint64]bool{}
	for _, tid := range p.Themes() {
		th := p.Theme(tid)
		if len(th.Facts) == 0 || len(th.Facts) > xmemory.DefaultMaxFacts {
			t.Errorf("theme %d has %d facts, want 1..%d", tid, len(th.Facts), xmemory.DefaultMaxFacts)
		}
		for _, f := range th.Facts {
			if seen[f] || !facts[f] || p.ThemeOf(f) != tid {
				t.Errorf("fact %d: seen twice %v, expected %v, ThemeOf %d want %d", f, seen[f], facts[f], p.ThemeOf(f), tid)
			}
			seen[f] = true
		}
	}
	if len(seen) != len(facts) || p.Len() != len(facts) {
		t.Errorf("partition holds %d facts (Len %d), want %d", len(seen), p.Len(), len(facts))
	}
}

func TestPartitionCapAndRemove(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	centres := [][]float32{vec(1, 0, 0, 0), vec(0, 1, 0, 0), vec(0, 0, 1, 0)}
	p, err := xmemory.New(4, xmemory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	facts := map[uint64]bool{}
	for i, v := range clustered(rng, centres, 120) {
		if err := p.Add(uint64(i+1), v); err != nil {
			t.Fatal(err)
		}
		facts[uint64(i+1)] = true
	}
	p.Maintain()
	checkInvariants(t, p, facts)
	if k := len(p.Themes()); k < 10 {
		t.Errorf("%d themes for 120 facts, want at least 10 (cap 12)", k)
	}
	// Themes do not mix the clusters.
	for _, tid := range p.Themes() {
		th := p.Theme(tid)
		for _, f := range th.Facts {
			if (f-1)%3 != (th.Facts[0]-1)%3 {
				t.Errorf("theme %d mixes clusters: %v", tid, th.Facts)
				break
			}
		}
	}
	for id := uint64(1); id <= 120; id += 2 {
		p.Remove(id)
		delete(facts, id)
	}
	p.Remove(9999) // unknown: nothing happens
	checkInvariants(t, p, facts)
}

// TestSplitSeparatesClusters: with attach at -1 every fact joins one
// theme; the split of the 14 facts it outgrew the cap with follows the two
// clusters, as f(P) prefers.
func TestSplitSeparatesClusters(t *testing.T) {
	p, err := xmemory.New(2, xmemory.Options{Attach: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 13 {
		v := vec(1, 0.01*float32(i%2))
		if i%2 == 1 {
			v = vec(0.01, 1)
		}
		if err := p.Add(uint64(i+1), v); err != nil {
			t.Fatal(err)
		}
	}
	if k := len(p.Themes()); k != 2 {
		t.Fatalf("%d themes after the split, want 2", k)
	}
	for _, tid := range p.Themes() {
		th := p.Theme(tid)
		for _, f := range th.Facts {
			if f%2 != th.Facts[0]%2 {
				t.Errorf("split mixed the clusters: %v", th.Facts)
			}
		}
	}
}

func TestAddRejectsWrongDims(t *testing.T) {
	p, _ := xmemory.New(3, xmemory.Options{})
	if err := p.Add(1, vec(1, 0)); err == nil {
		t.Error("Add of a 2-d vector to a 3-d partition succeeded")
	}
	if _, err := xmemory.New(3, xmemory.Options{MaxFacts: 1}); err == nil {
		t.Error("New with MaxFacts 1 succeeded")
	}
}

func TestSelect(t *testing.T) {
	a, c := vec(1, 0), vec(0, 1)
	items := []xmemory.Item{{Relevance: 1, Vec: a}, {Relevance: 0.9, Vec: a}, {Relevance: 0.5, Vec: c}}
	cases := []struct {
		name string
		o    xmemory.SelectOptions
		want []int
	}{
		// Z = 2. Step 1: a scores .5·2/2+.5·1 = 1. Step 2: b adds no
		// coverage (.45), c covers itself (.5·1/2+.5·.5 = .5): c; all
		// covered, stop.
		{"coverage picks the diverse one", xmemory.SelectOptions{Alpha: 0.5}, []int{0, 2}},
		// With α = .1 relevance wins: b (.81) before c (.5).
		{"relevance first", xmemory.SelectOptions{Alpha: 0.1, Coverage: 1}, []int{0, 1, 2}},
		{"max", xmemory.SelectOptions{Alpha: 0.5, Max: 1}, []int{0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := xmemory.Select(items, tc.o); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Select = %v, want %v", got, tc.want)
			}
		})
	}
	if got := xmemory.Select(nil, xmemory.SelectOptions{}); got != nil {
		t.Errorf("Select(nil) = %v", got)
	}
}

func TestFact(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Wow! I went to a LGBTQ support group yesterday and it was so powerful.", "I went to a LGBTQ support group yesterday and it was so powerful."},
		{"Thanks!", "Thanks!"},
		{"Wow. We have 3 kids. Cool!", "We have 3 kids."},
		{"That's awesome!\nI  painted a  sunrise   last week.", "I painted a sunrise last week."},
		{"", ""},
	}
	for _, tc := range cases {
		if got := xmemory.Fact(tc.in); got != tc.want {
			t.Errorf("Fact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzFact: Fact never panics, keeps only words of its input, and is
// empty only for blank input.
func FuzzFact(f *testing.F) {
	for _, s := range []string{"Hey! I moved to Paris in 2021.", "e.g. this. Mr. Smith?", "\n\n", "ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := xmemory.Fact(s)
		if (got == "") != (strings.TrimSpace(s) == "" || len(strings.Fields(s)) == 0) {
			t.Fatalf("Fact(%q) = %q", s, got)
		}
		words := map[string]bool{}
		for _, w := range strings.Fields(s) {
			words[w] = true
		}
		for _, w := range strings.Fields(got) {
			if !words[w] {
				t.Fatalf("Fact(%q) = %q invents %q", s, got, w)
			}
		}
	})
}

// TestRestoreContinuesAsStored: a partition restored from its encoded
// themes and state continues exactly as the original under the same
// adds; TakeDirty names the themes each step changed.
func TestRestoreContinuesAsStored(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	centres := [][]float32{vec(1, 0, 0, 0), vec(0, 1, 0, 0), vec(0, 0, 1, 0), vec(0, 0, 0, 1)}
	vecs := clustered(rng, centres, 200)
	p, _ := xmemory.New(4, xmemory.Options{})
	all := map[uint64][]float32{}
	for i, v := range vecs[:150] {
		all[uint64(i+1)] = v
		if err := p.Add(uint64(i+1), v); err != nil {
			t.Fatal(err)
		}
	}
	p.Remove(7)
	p.TakeDirty()
	var stored []xmemory.Theme
	for _, id := range p.Themes() {
		s, err := xmemory.DecodeTheme(xmemory.EncodeTheme(&xmemory.Stored{Theme: *p.Theme(id), Rep: p.Rep(id), Summary: "s"}))
		if err != nil || s.Rep != p.Rep(id) || s.Summary != "s" {
			t.Fatalf("theme %d round trip: %+v, %v", id, s, err)
		}
		stored = append(stored, s.Theme)
	}
	st, err := xmemory.DecodeState(xmemory.EncodeState(p.State()))
	if err != nil {
		t.Fatal(err)
	}
	q, err := xmemory.Restore(4, xmemory.Options{}, st, stored, all)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Equal(q) {
		t.Fatal("restored partition differs from the stored one")
	}
	for i, v := range vecs[150:] {
		id := uint64(151 + i)
		p.Add(id, v)
		q.Add(id, v)
		d := p.TakeDirty()
		if th := p.ThemeOf(id); !slices.Contains(d, th) {
			t.Errorf("add %d: theme %d changed but TakeDirty = %v", id, th, d)
		}
	}
	if !p.Equal(q) {
		t.Error("restored partition diverged from the original under the same adds")
	}
	if _, err := xmemory.Restore(4, xmemory.Options{}, xmemory.State{Next: 1}, stored, all); err == nil {
		t.Error("Restore accepted theme ids above State.Next")
	}
	if _, err := xmemory.DecodeTheme([]byte{1, 5, 0, 200}); err == nil {
		t.Error("DecodeTheme accepted a truncated theme")
	}
}
