package engine

import (
	bolt "go.etcd.io/bbolt"
)

// storedVectors reads the stored vectors of records in one bbolt
// transaction. Every reader of a record's vector goes through it (the
// writers are putVectors, unlink and the reindex swap), so that where a
// vector is kept is decided here alone.
//
// Today every vector is kept in bbolt's vectors bucket. The vector index
// holds a second, normalised copy; the relevance null sample reads that
// copy when it can (sampleVectors).
type storedVectors struct {
	vb   *bolt.Bucket
	dims int
}

// storedVectors returns the vector reader of tx.
func (e *Engine) storedVectors(tx *bolt.Tx) storedVectors {
	return storedVectors{vb: tx.Bucket(bucketVectors), dims: e.dims}
}

// get returns the vector of id: an error wrapping ErrDims when it has
// none (a history version, a record being re-embedded, a forgotten id)
// or one of other dimensions.
func (s storedVectors) get(id uint64) ([]float32, error) {
	return decodeVector(s.vb.Get(u64key(id)), s.dims)
}

// getKey is get with id as a bbolt key.
func (s storedVectors) getKey(k []byte) ([]float32, error) {
	return decodeVector(s.vb.Get(k), s.dims)
}

// has reports whether id has a vector.
func (s storedVectors) has(id uint64) bool { return s.vb.Get(u64key(id)) != nil }

// next returns the lowest id at or above from that has a vector, and its
// vector (nil when it has other dimensions); false when there is none.
func (s storedVectors) next(from uint64) (uint64, []float32, bool) {
	k, v := s.vb.Cursor().Seek(u64key(from))
	if k == nil {
		return 0, nil, false
	}
	vec, err := decodeVector(v, s.dims)
	if err != nil {
		vec = nil
	}
	return keyU64(k), vec, true
}
