package fts

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/numeric"

	"github.com/hmo-dev/hmo/engine"
)

// TestTimeTermsAreBlevesEvery8Bits: the time field indexes, for each
// shift 0, 8, ..., 56, bleve's prefix-coded term of the value, which an
// index bleve's datetime field wrote holds too.
func TestTimeTermsAreBlevesEvery8Bits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vals := []int64{0, 1, -1, math.MinInt64, math.MaxInt64, 1 << 62, -(1 << 62), 1_700_000_000, -2_208_988_800}
	for range 200 {
		vals = append(vals, int64(r.Uint64()), r.Int64N(4_000_000_000)-2_000_000_000)
	}
	for _, v := range vals {
		toks := timeTerms(v)
		if len(toks) != 8 {
			t.Fatalf("%d: %d terms, want 8", v, len(toks))
		}
		for i, tok := range toks {
			want := numeric.MustNewPrefixCodedInt64(v, uint(8*i))
			if string(tok.Term) != string(want) {
				t.Fatalf("%d: term %d = %q, want bleve's shift %d %q", v, i, tok.Term, 8*i, want)
			}
		}
	}
}

// TestSplitTimeRange: the prefixes cover [lo, hi] exactly, each value
// once, with at most 255 prefixes at each end of each shift and 256 at
// the last.
func TestSplitTimeRange(t *testing.T) {
	under := func(rs []timeRange, v int64) int {
		n := 0
		for _, tr := range rs {
			if p := v >> tr.shift; tr.lo <= p && p <= tr.hi {
				n++
			}
		}
		return n
	}
	type bounds struct{ lo, hi int64 }
	cases := []bounds{
		{0, 0}, {0, 255}, {0, 256}, {1, 255}, {-1, 0}, {-256, 255}, {-300, 70_000},
		{math.MinInt64, math.MaxInt64}, {math.MinInt64, 0}, {0, math.MaxInt64},
		{math.MinInt64, math.MinInt64}, {math.MaxInt64, math.MaxInt64},
		{math.MaxInt64 - 1000, math.MaxInt64}, {math.MinInt64, math.MinInt64 + 1000},
		{1_700_000_000, 1_700_086_399}, {-(1 << 62), 1 << 62}, {5, 4},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		a, b := int64(r.Uint64()), int64(r.Uint64())
		cases = append(cases, bounds{min(a, b), max(a, b)})
		c := r.Int64N(1 << 40)
		cases = append(cases, bounds{c, c + r.Int64N(1<<uint(r.IntN(40)))})
	}
	for _, c := range cases {
		rs := splitTimeRange(c.lo, c.hi)
		if c.lo > c.hi {
			if len(rs) != 0 {
				t.Errorf("[%d, %d]: %v, want none", c.lo, c.hi, rs)
			}
			continue
		}
		perShift := map[uint]int64{}
		for _, tr := range rs {
			if tr.lo > tr.hi || tr.shift%8 != 0 || tr.shift > 56 {
				t.Fatalf("[%d, %d]: bad range %+v", c.lo, c.hi, tr)
			}
			perShift[tr.shift] += tr.hi - tr.lo + 1
		}
		for s, n := range perShift {
			if s < 56 && n > 2*255 || s == 56 && n > 256 {
				t.Errorf("[%d, %d]: %d prefixes at shift %d", c.lo, c.hi, n, s)
			}
		}
		// Values at and around the bounds, and inside.
		probe := []int64{c.lo, c.hi}
		for _, v := range []int64{c.lo, c.hi} {
			for d := int64(1); d < 1<<62; d *= 3 {
				probe = append(probe, v-d, v+d) // wrapping around is a value too
			}
		}
		for range 50 {
			if span := uint64(c.hi - c.lo); span < math.MaxUint64 {
				probe = append(probe, c.lo+int64(r.Uint64N(span+1)))
			}
		}
		for _, v := range probe {
			want := 0
			if c.lo <= v && v <= c.hi {
				want = 1
			}
			if got := under(rs, v); got != want {
				t.Fatalf("[%d, %d]: %d is under %d prefixes, want %d (%v)", c.lo, c.hi, v, got, want, rs)
			}
		}
	}
}

// TestTimeFiltersMatchPasses: on an index written by this package and on
// one written with bleve's datetime field (older builds), a time filter
// keeps exactly the documents passes keeps, for bounds down to the
// second.
func TestTimeFiltersMatchPasses(t *testing.T) {
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(5, 6))
	docs := make([]engine.TextDoc, 400)
	for i := range docs {
		d := engine.TextDoc{ID: uint64(i + 1), Text: "walk"}
		switch i % 10 {
		case 0: // no time
		case 1:
			d.Time = time.Date(1850+r.IntN(300), 1, 1, 0, 0, 0, 0, time.UTC)
		default: // within a month, many in the same minute
			d.Time = base.Add(time.Duration(r.Int64N(30*24*3600*1e9)) / time.Duration(1+i%4*1000))
		}
		docs[i] = d
	}
	newer, err := Open(filepath.Join(t.TempDir(), "new"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer newer.Close()
	if err := newer.Apply(docs, nil, 1); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "old")
	writeWithBleve(t, dir, docs, 1)
	older, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer older.Close()
	var fs []engine.TextFilter
	for range 150 {
		a, b := docs[r.IntN(len(docs))].Time, docs[r.IntN(len(docs))].Time
		if r.IntN(2) == 0 {
			a = a.Add(time.Duration(r.Int64N(4e9) - 2e9))
		}
		if b.Before(a) {
			a, b = b, a
		}
		f := engine.TextFilter{From: a, To: b}
		switch r.IntN(5) {
		case 0:
			f.From = time.Time{}
		case 1:
			f.To = time.Time{}
		}
		fs = append(fs, f)
	}
	fs = append(fs, engine.TextFilter{From: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)}, engine.TextFilter{To: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)})
	for _, f := range fs {
		var want []uint64
		for i := range docs {
			if passes(&docs[i], f) {
				want = append(want, docs[i].ID)
			}
		}
		for name, x := range map[string]*Index{"new": newer, "bleve's": older} {
			hits, err := x.Search(t.Context(), "walk", len(docs), f)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, h := range hits {
				got = append(got, h.ID)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("%s index, from %v to %v: %d hits, want %d", name, f.From, f.To, len(got), len(want))
			}
		}
	}
}
