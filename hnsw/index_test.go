package hnsw_test

import (
	"errors"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/hnsw"
)

// paths are the two search strategies every behavioural test runs on.
var paths = []struct {
	name string
	opts hnsw.Options
}{
	{"exact", hnsw.Options{ExactBelow: 1 << 30}},
	{"graph", hnsw.Options{ExactBelow: -1}},
}

func TestOpenOptions(t *testing.T) {
	tests := []struct {
		name string
		opts *hnsw.Options
	}{
		{"nil", nil},
		{"no dims", &hnsw.Options{}},
		{"negative dims", &hnsw.Options{Dims: -3}},
		{"M 1", &hnsw.Options{Dims: 4, M: 1}},
		{"Ml 1", &hnsw.Options{Dims: 4, Ml: 1}},
		{"Ml NaN", &hnsw.Options{Dims: 4, Ml: math.NaN()}},
		{"EfSearch negative", &hnsw.Options{Dims: 4, EfSearch: -1}},
		{"EfConstruction negative", &hnsw.Options{Dims: 4, EfConstruction: -1}},
		{"CompactRatio 1.5", &hnsw.Options{Dims: 4, CompactRatio: 1.5}},
		{"CompactRatio negative", &hnsw.Options{Dims: 4, CompactRatio: -0.1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := hnsw.Open(t.TempDir(), tt.opts)
			if !errors.Is(err, hnsw.ErrOptions) {
				t.Errorf("Open error = %v, want ErrOptions", err)
			}
			if x != nil {
				t.Errorf("Open returned an index with an error")
			}
		})
	}
}

func TestApplyRejectsBadVectors(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	tests := []struct {
		name string
		vec  []float32
		want error
	}{
		{"short", []float32{1, 0, 0}, hnsw.ErrDimension},
		{"long", []float32{1, 0, 0, 0, 0}, hnsw.ErrDimension},
		{"empty", nil, hnsw.ErrDimension},
		{"NaN", []float32{1, nan, 0, 0}, hnsw.ErrNotFinite},
		{"+Inf", []float32{inf, 0, 0, 0}, hnsw.ErrNotFinite},
		{"-Inf", []float32{0, 0, -inf, 0}, hnsw.ErrNotFinite},
		{"zero", []float32{0, 0, 0, 0}, hnsw.ErrZeroVector},
	}
	for _, p := range paths {
		for _, tt := range tests {
			t.Run(p.name+"/"+tt.name, func(t *testing.T) {
				x, _ := openIndex(t, 4, p.opts)
				mustApply(t, x, []engine.VectorDoc{{ID: 1, Vector: []float32{1, 0, 0, 0}}}, nil, 5)
				// A good vector next to the bad one must not be applied either.
				adds := []engine.VectorDoc{{ID: 2, Vector: []float32{0, 1, 0, 0}}, {ID: 3, Vector: tt.vec}}
				err := x.Apply(adds, []uint64{1}, 6)
				if !errors.Is(err, tt.want) {
					t.Fatalf("Apply error = %v, want %v", err, tt.want)
				}
				if got := x.Len(); got != 1 {
					t.Errorf("Len = %d, want 1 (nothing applied)", got)
				}
				if got := x.Watermark(); got != 5 {
					t.Errorf("Watermark = %d, want 5 (nothing applied)", got)
				}
				hits := mustSearch(t, x, []float32{0, 1, 0, 0}, 5)
				if got := ids(hits); !slices.Equal(got, []uint64{1}) {
					t.Errorf("hits = %v, want [1]", got)
				}
			})
		}
	}
}

func TestSearchRejectsBadInput(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name string
		q    []float32
		k    int
		want error
	}{
		{"k zero", []float32{1, 0, 0, 0}, 0, hnsw.ErrInvalidK},
		{"k negative", []float32{1, 0, 0, 0}, -1, hnsw.ErrInvalidK},
		{"short", []float32{1, 0}, 3, hnsw.ErrDimension},
		{"NaN", []float32{nan, 0, 0, 1}, 3, hnsw.ErrNotFinite},
		{"zero", make([]float32, 4), 3, hnsw.ErrZeroVector},
	}
	x, _ := openIndex(t, 4, hnsw.Options{ExactBelow: -1})
	mustApply(t, x, docs(1, newDataset(3, 4, 2).points(50)), nil, 1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := x.Search(tt.q, tt.k)
			if !errors.Is(err, tt.want) {
				t.Errorf("Search error = %v, want %v", err, tt.want)
			}
			if hits != nil {
				t.Errorf("hits = %v, want none", hits)
			}
		})
	}
}

func TestSearchEmpty(t *testing.T) {
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			x, _ := openIndex(t, 4, p.opts)
			hits, err := x.Search([]float32{1, 0, 0, 0}, 10)
			if err != nil || len(hits) != 0 {
				t.Errorf("Search on empty index = %v, %v; want no hits, nil", hits, err)
			}
			mustApply(t, x, docs(1, [][]float32{{1, 0, 0, 0}}), []uint64{1}, 2)
			hits, err = x.Search([]float32{1, 0, 0, 0}, 10)
			if err != nil || len(hits) != 0 {
				t.Errorf("Search after deleting all = %v, %v; want no hits, nil", hits, err)
			}
		})
	}
}

// TestScores checks that scores are cosine similarities whatever the input
// vectors' lengths, best first.
func TestScores(t *testing.T) {
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			x, _ := openIndex(t, 3, p.opts)
			mustApply(t, x, []engine.VectorDoc{
				{ID: 10, Vector: []float32{5, 0, 0}},   // cos 1 with q
				{ID: 11, Vector: []float32{0, 0.1, 0}}, // cos 0
				{ID: 12, Vector: []float32{1, 1, 0}},   // cos 1/√2
				{ID: 13, Vector: []float32{-2, 0, 0}},  // cos -1
			}, nil, 1)
			hits := mustSearch(t, x, []float32{0.5, 0, 0}, 10)
			want := []engine.VectorHit{{ID: 10, Score: 1}, {ID: 12, Score: 1 / math.Sqrt2}, {ID: 11, Score: 0}, {ID: 13, Score: -1}}
			if len(hits) != len(want) {
				t.Fatalf("hits = %v, want %v", hits, want)
			}
			for i := range want {
				if hits[i].ID != want[i].ID || math.Abs(float64(hits[i].Score-want[i].Score)) > 1e-6 {
					t.Errorf("hit %d = %+v, want %+v", i, hits[i], want[i])
				}
			}
		})
	}
}

func TestTombstonesNeverReturned(t *testing.T) {
	t.Parallel()
	const n = 600
	d := newDataset(7, 16, 5)
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			opts := p.opts
			opts.CompactRatio = 1 // keep every tombstone in the graph
			x, _ := openIndex(t, 16, opts)
			mustApply(t, x, docs(0, d.points(n)), nil, 1)
			var dels []uint64
			for id := uint64(0); id < n; id += 3 {
				if id%2 == 0 {
					dels = append(dels, id)
				}
			}
			// Odd multiples of 3 are replaced: their old slots are tombstones.
			var repl []engine.VectorDoc
			for id := uint64(3); id < n; id += 6 {
				repl = append(repl, engine.VectorDoc{ID: id, Vector: d.point()})
			}
			mustApply(t, x, repl, dels, 2)
			if got, want := x.Len(), n-len(dels); got != want {
				t.Errorf("Len = %d, want %d", got, want)
			}
			deleted := make(map[uint64]bool)
			for _, id := range dels {
				deleted[id] = true
			}
			for range 50 {
				hits := mustSearch(t, x, d.point(), 40)
				if len(hits) != 40 {
					t.Fatalf("got %d hits, want 40", len(hits))
				}
				seen := make(map[uint64]bool)
				for _, h := range hits {
					if deleted[h.ID] {
						t.Fatalf("deleted id %d returned", h.ID)
					}
					if seen[h.ID] {
						t.Fatalf("id %d returned twice (old and new vector)", h.ID)
					}
					seen[h.ID] = true
				}
			}
		})
	}
}

func TestReplace(t *testing.T) {
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			x, _ := openIndex(t, 8, p.opts)
			d := newDataset(11, 8, 3)
			mustApply(t, x, docs(100, d.points(200)), nil, 1)
			old, repl := []float32{1, 0, 0, 0, 0, 0, 0, 0}, []float32{0, 0, 0, 0, 0, 0, 0, 1}
			mustApply(t, x, []engine.VectorDoc{{ID: 7, Vector: old}}, nil, 2)
			mustApply(t, x, []engine.VectorDoc{{ID: 7, Vector: repl}}, nil, 3)
			if got := x.Len(); got != 201 {
				t.Errorf("Len = %d, want 201", got)
			}
			top := mustSearch(t, x, repl, 1)
			if len(top) != 1 || top[0].ID != 7 || math.Abs(float64(top[0].Score)-1) > 1e-6 {
				t.Errorf("search for new vector = %v, want id 7 with score 1", top)
			}
			for _, h := range mustSearch(t, x, old, 201) {
				if h.ID == 7 && h.Score > 0.999 {
					t.Errorf("old vector of id 7 still found: %+v", h)
				}
			}
		})
	}
}

func TestAddThenDeleteInOneApply(t *testing.T) {
	x, _ := openIndex(t, 2, hnsw.Options{})
	mustApply(t, x, []engine.VectorDoc{{ID: 1, Vector: []float32{1, 0}}, {ID: 2, Vector: []float32{0, 1}}}, []uint64{1, 99}, 4)
	if got := ids(mustSearch(t, x, []float32{1, 0}, 5)); !slices.Equal(got, []uint64{2}) {
		t.Errorf("hits = %v, want [2]", got)
	}
}

func TestWatermark(t *testing.T) {
	x, _ := openIndex(t, 2, hnsw.Options{})
	if got := x.Watermark(); got != 0 {
		t.Errorf("new index Watermark = %d, want 0", got)
	}
	for _, wm := range []uint64{3, 9, 10} {
		mustApply(t, x, nil, nil, wm)
		if got := x.Watermark(); got != wm {
			t.Errorf("Watermark = %d, want %d", got, wm)
		}
	}
}

// TestCompaction deletes past CompactRatio and checks that the saved graph
// shrinks to the live vectors while searches stay exact.
func TestCompaction(t *testing.T) {
	const n = 400
	d := newDataset(5, 32, 4)
	vecs := d.points(n)
	sizes := make(map[float64]float64)
	for _, ratio := range []float64{1, 0.5} {
		x, dir := openIndex(t, 32, hnsw.Options{ExactBelow: -1, CompactRatio: ratio})
		mustApply(t, x, docs(0, vecs), nil, 1)
		ref := model{}
		var dels []uint64
		for i, v := range vecs {
			if i%10 < 6 {
				dels = append(dels, uint64(i))
			} else {
				ref[uint64(i)] = v
			}
		}
		mustApply(t, x, nil, dels, 2)
		if err := x.Save(); err != nil {
			t.Fatalf("Save: %v", err)
		}
		sizes[ratio], _ = fileSizes(t, dir)
		for range 20 {
			q := d.point()
			if r := recall(mustSearch(t, x, q, 10), ref.search(q, 10)); r < 0.9 {
				t.Errorf("CompactRatio %v: recall %.2f, want >= 0.9", ratio, r)
			}
		}
	}
	// 60% of the nodes deleted: the compacted graph holds 40% of them.
	if got := sizes[0.5] / sizes[1]; got > 0.5 {
		t.Errorf("compacted graph is %.2f of the uncompacted one, want <= 0.5", got)
	}
}

func TestClosed(t *testing.T) {
	x, err := hnsw.Open(t.TempDir(), &hnsw.Options{Dims: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	calls := map[string]error{
		"Apply":  x.Apply(docs(1, [][]float32{{1, 0}}), nil, 1),
		"Save":   x.Save(),
		"Close":  x.Close(),
		"Search": func() error { _, err := x.Search([]float32{1, 0}, 1); return err }(),
	}
	for name, err := range calls {
		if !errors.Is(err, hnsw.ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}

// TestConcurrent runs Apply, Search, Save and the accessors at once; run
// it with -race.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	const dims = 16
	x, _ := openIndex(t, dims, hnsw.Options{ExactBelow: 100, CompactRatio: 0.3})
	d := newDataset(21, dims, 4)
	mustApply(t, x, docs(0, d.points(300)), nil, 1)
	queries := d.points(64)
	writes := make([][]engine.VectorDoc, 30)
	for i := range writes {
		writes[i] = docs(uint64(i*10), d.points(20)) // overlapping ids: replaces
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i, w := range writes {
			if err := x.Apply(w, []uint64{uint64(i * 7)}, uint64(i+2)); err != nil {
				t.Errorf("Apply: %v", err)
			}
		}
	})
	wg.Go(func() {
		for range 5 {
			if err := x.Save(); err != nil {
				t.Errorf("Save: %v", err)
			}
		}
	})
	for g := range 3 {
		wg.Go(func() {
			for i := range 200 {
				hits, err := x.Search(queries[(g+i)%len(queries)], 10)
				if err != nil || len(hits) != 10 {
					t.Errorf("Search = %d hits, %v; want 10, nil", len(hits), err)
					return
				}
				_ = x.Len() + int(x.Watermark())
			}
		})
	}
	wg.Wait()
	if got := x.Watermark(); got != uint64(len(writes)+1) {
		t.Errorf("Watermark = %d, want %d", got, len(writes)+1)
	}
}
