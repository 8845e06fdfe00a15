package hnsw

import "fmt"

// Defaults for Options. DefaultM, DefaultEfSearch, DefaultEfConstruction
// and DefaultExactBelow were chosen by measurement on clustered 100-d unit
// vectors; doc.go has the figures, bench_test.go the benchmark.
const (
	// DefaultM is the default maximum number of neighbours per graph node.
	// coder/hnsw applies M to every layer, the base layer included (where
	// HNSW usually allows 2M), hence a higher value than its default 16.
	DefaultM = 24
	// DefaultMl is the default level generation factor: each graph layer
	// holds about Ml times as many nodes as the layer below.
	DefaultMl = 0.25
	// DefaultEfSearch is the default size of the candidate list kept while
	// searching the graph, in nodes: recall@10 0.999 at 20K vectors and
	// 0.963 at 100K.
	DefaultEfSearch = 64
	// DefaultEfConstruction is the default size of the candidate list kept
	// while inserting into the graph, in nodes. Doubling it cost 65% more
	// build time for under 0.01 more recall.
	DefaultEfConstruction = 24
	// DefaultExactBelow is the default live-vector count at or below which
	// the index keeps no graph and Search scans every vector: up to about
	// 40K 100-d vectors the scan is as fast as coder/hnsw's graph, exact,
	// and spares the graph's memory (82 MB of heap at 40K, for 16 MB of
	// vectors).
	DefaultExactBelow = 40_000
	// DefaultCompactRatio is the default share of tombstoned slots above
	// which Apply drops the tombstones and rebuilds the graph.
	DefaultCompactRatio = 0.2
	// DefaultSeed is the default seed of the graph's level generator.
	DefaultSeed = 1
)

// Options configures an Index. Dims is required, so a nil *Options is
// refused; zero fields take the documented defaults.
type Options struct {
	// Dims is the length of every vector. Required, > 0. A saved index
	// with other Dims is refused with ErrCorrupt.
	Dims int
	// M is the maximum number of neighbours per graph node, on every
	// layer. Default DefaultM (24). Higher M improves recall and costs
	// memory and insert time.
	M int
	// Ml is the level generation factor in (0, 1): each layer holds about
	// Ml times the nodes of the layer below. Default DefaultMl (0.25).
	Ml float64
	// EfSearch is the candidate list size, in nodes, of a graph search.
	// It is raised to the number of hits fetched when that is larger.
	// Default DefaultEfSearch. Higher is slower and more exact.
	EfSearch int
	// EfConstruction is the candidate list size, in nodes, used when a
	// vector is inserted into the graph; coder/hnsw raises it to M, so
	// values below M act as M. Default DefaultEfConstruction. Higher
	// builds a better graph, more slowly.
	EfConstruction int
	// ExactBelow is the live-vector count at or below which the index
	// keeps no graph and Search scans all vectors exactly. The Apply that
	// passes it builds the graph. Default DefaultExactBelow; a negative
	// value always keeps a graph (Search still scans when it would have to
	// fetch more than half the graph's nodes).
	ExactBelow int
	// CompactRatio is the share of tombstoned slots, in (0, 1], above
	// which Apply drops the tombstones and rebuilds the graph from the
	// live vectors. Default DefaultCompactRatio (0.2); 1 never compacts.
	CompactRatio float64
	// Seed seeds the graph's level generator, so that builds from the
	// same input in the same order give the same levels. Default
	// DefaultSeed.
	Seed int64
}

// withDefaults returns a copy of o with zero fields set to their defaults,
// or an error wrapping ErrOptions.
func (o *Options) withDefaults() (Options, error) {
	if o == nil {
		return Options{}, fmt.Errorf("%w: Dims is required", ErrOptions)
	}
	c := *o
	if c.M == 0 {
		c.M = DefaultM
	}
	if c.Ml == 0 {
		c.Ml = DefaultMl
	}
	if c.EfSearch == 0 {
		c.EfSearch = DefaultEfSearch
	}
	if c.EfConstruction == 0 {
		c.EfConstruction = DefaultEfConstruction
	}
	if c.ExactBelow == 0 {
		c.ExactBelow = DefaultExactBelow
	}
	if c.CompactRatio == 0 {
		c.CompactRatio = DefaultCompactRatio
	}
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	return c, c.validate()
}

func (o *Options) validate() error {
	switch {
	case o.Dims <= 0:
		return fmt.Errorf("%w: Dims %d must be > 0", ErrOptions, o.Dims)
	case o.M < 2:
		return fmt.Errorf("%w: M %d must be >= 2", ErrOptions, o.M)
	case !(o.Ml > 0 && o.Ml < 1):
		return fmt.Errorf("%w: Ml %v must be in (0, 1)", ErrOptions, o.Ml)
	case o.EfSearch < 1:
		return fmt.Errorf("%w: EfSearch %d must be > 0", ErrOptions, o.EfSearch)
	case o.EfConstruction < 1:
		return fmt.Errorf("%w: EfConstruction %d must be > 0", ErrOptions, o.EfConstruction)
	case !(o.CompactRatio > 0 && o.CompactRatio <= 1):
		return fmt.Errorf("%w: CompactRatio %v must be in (0, 1]", ErrOptions, o.CompactRatio)
	}
	return nil
}
