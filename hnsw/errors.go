package hnsw

import "errors"

// Sentinel errors. Errors returned by this package wrap one of these with
// context; test for them with errors.Is.
var (
	// ErrOptions reports invalid Options given to Open.
	ErrOptions = errors.New("hnsw: invalid options")
	// ErrDimension reports a vector whose length is not Options.Dims.
	ErrDimension = errors.New("hnsw: dimension mismatch")
	// ErrNotFinite reports a vector holding NaN or ±Inf.
	ErrNotFinite = errors.New("hnsw: vector not finite")
	// ErrZeroVector reports a vector of length zero (all components 0),
	// which has no direction and so no cosine similarity.
	ErrZeroVector = errors.New("hnsw: zero vector")
	// ErrInvalidK reports a Search with k <= 0.
	ErrInvalidK = errors.New("hnsw: k must be positive")
	// ErrCorrupt reports a saved index that cannot be loaded: damaged,
	// truncated, from another format version or saved with other Dims.
	// The index is derived data: remove the directory and rebuild it.
	ErrCorrupt = errors.New("hnsw: index file corrupt or incompatible")
	// ErrInternal reports a panic inside github.com/coder/hnsw, recovered
	// and turned into an error.
	ErrInternal = errors.New("hnsw: internal error")
	// ErrClosed reports use of an Index after Close.
	ErrClosed = errors.New("hnsw: index closed")
)
