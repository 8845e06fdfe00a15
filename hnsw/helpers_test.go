package hnsw_test

import (
	"cmp"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/hnsw"
)

// dataset is a seeded set of clustered unit vectors: points drawn around
// random unit centres, like embeddings of texts on a few topics.
type dataset struct {
	dims    int
	centres [][]float32
	r       *rand.Rand
}

// clusterNoise is the standard deviation of each component of a point's
// offset from its centre (the offset's norm is about noise*sqrt(dims)).
const clusterNoise = 0.08

func newDataset(seed int64, dims, clusters int) *dataset {
	d := &dataset{dims: dims, r: rand.New(rand.NewSource(seed))}
	for range clusters {
		d.centres = append(d.centres, d.gaussian(1))
	}
	return d
}

// gaussian returns a unit vector along a random Gaussian direction scaled
// by s before normalisation (s only matters to callers adding to it).
func (d *dataset) gaussian(s float64) []float32 {
	v := make([]float32, d.dims)
	for i := range v {
		v[i] = float32(d.r.NormFloat64() * s)
	}
	return unit(v)
}

// point returns one unit vector near a random centre.
func (d *dataset) point() []float32 {
	c := d.centres[d.r.Intn(len(d.centres))]
	v := make([]float32, d.dims)
	for i := range v {
		v[i] = c[i] + float32(d.r.NormFloat64()*clusterNoise)
	}
	return unit(v)
}

func (d *dataset) points(n int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = d.point()
	}
	return out
}

func unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	inv := 1 / math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return v
}

// docs numbers vectors from firstID.
func docs(firstID uint64, vecs [][]float32) []engine.VectorDoc {
	out := make([]engine.VectorDoc, len(vecs))
	for i, v := range vecs {
		out[i] = engine.VectorDoc{ID: firstID + uint64(i), Vector: v}
	}
	return out
}

// model is the brute-force reference: live vectors by id.
type model map[uint64][]float32

func (m model) search(q []float32, k int) []engine.VectorHit {
	q = unit(slices.Clone(q))
	// top holds the best k hits so far, best first.
	top := make([]engine.VectorHit, 0, k+1)
	for id, v := range m {
		var s float32
		for i := range v {
			s += q[i] * v[i]
		}
		h := engine.VectorHit{ID: id, Score: s}
		if len(top) == k && compareHits(h, top[k-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, h, compareHits)
		top = slices.Insert(top, i, h)
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}

// compareHits orders hits best first: higher score, then lower id.
func compareHits(a, b engine.VectorHit) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// recall is the share of want's ids found in got.
func recall(got, want []engine.VectorHit) float64 {
	if len(want) == 0 {
		return 1
	}
	in := make(map[uint64]bool, len(got))
	for _, h := range got {
		in[h.ID] = true
	}
	n := 0
	for _, h := range want {
		if in[h.ID] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

func ids(hits []engine.VectorHit) []uint64 {
	out := make([]uint64, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// openIndex opens an index in a fresh directory with opts (Dims set from
// dims if zero) and closes it when the test ends.
func openIndex(tb testing.TB, dims int, opts hnsw.Options) (*hnsw.Index, string) {
	tb.Helper()
	dir := tb.TempDir()
	if opts.Dims == 0 {
		opts.Dims = dims
	}
	x, err := hnsw.Open(dir, &opts)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { x.Close() })
	return x, dir
}

func mustApply(tb testing.TB, x *hnsw.Index, adds []engine.VectorDoc, dels []uint64, wm uint64) {
	tb.Helper()
	if err := x.Apply(adds, dels, wm); err != nil {
		tb.Fatalf("Apply: %v", err)
	}
}

func mustSearch(tb testing.TB, x *hnsw.Index, q []float32, k int) []engine.VectorHit {
	tb.Helper()
	hits, err := x.Search(q, k)
	if err != nil {
		tb.Fatalf("Search: %v", err)
	}
	return hits
}
