package hnsw

import (
	"fmt"
	"math/rand"

	chnsw "github.com/coder/hnsw"
	"github.com/viterin/vek/vek32"
)

// distanceName names unitCosine in saved graphs.
const distanceName = "hmo-unit-cosine"

func init() {
	// coder/hnsw looks distance functions up by name when it exports and
	// imports a graph. This runs once, before any graph exists.
	chnsw.RegisterDistanceFunc(distanceName, unitCosine)
}

// unitCosine is the cosine distance of two unit vectors: 1 - a·b. It skips
// the two norms chnsw.CosineDistance computes on every call.
func unitCosine(a, b []float32) float32 {
	return 1 - vek32.Dot(a, b)
}

// graph is the HNSW graph. Its keys are slots (see Index.ids).
//
// coder/hnsw has no locks: Add mutates node maps, Search only reads them
// and allocates its own state, so searches may run concurrently with each
// other but not with an Add. Index.mu enforces that.
type graph = chnsw.Graph[uint64]

// newGraph returns an empty graph configured by o.
func newGraph(o *Options) *graph {
	return &graph{
		Distance: unitCosine,
		Rng:      rand.New(rand.NewSource(o.Seed)),
		M:        o.M,
		Ml:       o.Ml,
		EfSearch: o.EfSearch,
	}
}

// guard runs fn, turning a panic inside coder/hnsw into ErrInternal.
func guard(op string, fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: %v", ErrInternal, op, r)
		}
	}()
	fn()
	return nil
}

// graphAdd inserts vec under key, searching EfConstruction candidates.
// The caller holds Index.mu for writing.
func graphAdd(g *graph, o *Options, key uint64, vec []float32) error {
	return guard("add", func() {
		g.EfSearch = o.EfConstruction
		defer func() { g.EfSearch = o.EfSearch }()
		g.Add(chnsw.MakeNode(key, vec))
	})
}

// graphSearch returns the keys of the n nodes nearest q, nearest first.
// The caller holds Index.mu for reading.
func graphSearch(g *graph, q []float32, n int) ([]uint64, error) {
	var res []chnsw.SearchResult[uint64]
	err := guard("search", func() { res = g.SearchWithDistance(q, n) })
	if err != nil {
		return nil, err
	}
	keys := make([]uint64, len(res))
	for i, r := range res {
		keys[i] = r.Key
	}
	return keys, nil
}
