package engine

import (
	"cmp"
	"math"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// storedVectors reads the stored vectors of records in one bbolt
// transaction. Every reader of a record's vector goes through it (the
// writers are putVectors, unlink and the reindex swap), so that where a
// vector is kept is decided here alone.
//
// Every vector is kept in bbolt's vectors bucket, the only float32 copy
// of a store made by this version: its vector index keeps int8 rows
// (RescoredVectorIndex) and the vector search rescores its candidates
// from here (rescore). The index of an older store holds a second,
// normalised float32 copy; the relevance null sample reads that copy
// when it can (sampleVectors).
type storedVectors struct {
	kv   kvSeeker // the vectors bucket, or a pageReader's reads of it
	dims int
}

// storedVectors returns the vector reader of tx.
func (e *Engine) storedVectors(tx *bolt.Tx) storedVectors {
	return storedVectors{kv: boltSeeker{tx.Bucket(bucketVectors)}, dims: e.dims}
}

// preadVectors is storedVectors reading by pread when it can
// (boltDB.preadBucket).
func (e *Engine) preadVectors(tx *bolt.Tx) storedVectors {
	return storedVectors{kv: e.db.preadBucket(tx, bucketVectors), dims: e.dims}
}

// get returns the vector of id: an error wrapping ErrDims when it has
// none (a history version, a record being re-embedded, a forgotten id)
// or one of other dimensions.
func (s storedVectors) get(id uint64) ([]float32, error) {
	return decodeVector(peekValue(s.kv, u64key(id)), s.dims)
}

// getKey is get with id as a bbolt key.
func (s storedVectors) getKey(k []byte) ([]float32, error) {
	return decodeVector(peekValue(s.kv, k), s.dims)
}

// has reports whether id has a vector.
func (s storedVectors) has(id uint64) bool { return peekValue(s.kv, u64key(id)) != nil }

// next returns the lowest id at or above from that has a vector, and its
// vector (nil when it has other dimensions); false when there is none.
func (s storedVectors) next(from uint64) (uint64, []float32, bool) {
	k, v := s.kv.Seek(u64key(from))
	if k == nil {
		return 0, nil, false
	}
	vec, err := decodeVector(v, s.dims)
	if err != nil {
		vec = nil
	}
	return keyU64(k), vec, true
}

// searchIndex runs search, a search of vi for the k best (its Search or
// SearchFilter), and returns the hits best first. When vi keeps only
// approximations of its vectors (RescoredVectorIndex), it asks search
// for vi's candidates instead and scores them exactly from the stored
// vectors (rescore).
func (e *Engine) searchIndex(vi VectorIndex, qv []float32, k int, search func(n int) ([]VectorHit, error)) ([]VectorHit, error) {
	n := 0
	if r, ok := vi.(RescoredVectorIndex); ok {
		n = r.RescoreCandidates(k)
	}
	if n <= 0 {
		return search(k)
	}
	hits, err := search(n)
	if err != nil {
		return nil, err
	}
	return e.rescore(qv, hits, k)
}

// rescore scores hits exactly against the query qv and returns the best
// k, best first, ties to the lower id: the cosine of the query and the
// stored vector, both normalised as the vector file normalises them
// (unitQuery, unitVector) and multiplied by the kernel every similarity
// goes through, so that the scores are bit for bit those of a vector
// file that rescores from its own float32 rows. The vectors are read in
// one bbolt transaction, after the index's search has returned (no lock
// of the index is held): first those of the k best by the index's
// scores, then those of the others that their bound (VectorHit.Err)
// does not rule out, an index score plus its bound below the k-th best
// exact score read so far (which the final k-th can only exceed): the
// same k, with fewer reads (for k 100 on the 100K peers store, 73% of
// the 200 candidates; BENCHMARKS.md, vec8). A hit whose record has no
// vector of the store's dimensions now (deleted, or being re-embedded
// since the scan) is dropped; one whose vector was replaced since is
// scored as it is now when it is read, and its bound, the old vector's,
// may rule it out first.
func (e *Engine) rescore(qv []float32, hits []VectorHit, k int) ([]VectorHit, error) {
	uq := unitQuery(qv)
	if uq == nil || len(hits) == 0 || k <= 0 {
		return nil, nil
	}
	hits = slices.Clone(hits)
	slices.SortFunc(hits, func(a, b VectorHit) int { return cmp.Compare(a.ID, b.ID) })
	hits = slices.CompactFunc(hits, func(a, b VectorHit) bool { return a.ID == b.ID })
	slices.SortFunc(hits, func(a, b VectorHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	out := make([]VectorHit, 0, len(hits))
	err := e.db.View(func(tx *bolt.Tx) error {
		vs := e.preadVectors(tx)
		// In id order: neighbouring keys share bbolt pages.
		read := func(hs []VectorHit) {
			slices.SortFunc(hs, func(a, b VectorHit) int { return cmp.Compare(a.ID, b.ID) })
			for _, h := range hs {
				v, err := vs.get(h.ID)
				if err != nil || !normalize(v) || len(v) != len(uq) {
					continue
				}
				out = append(out, VectorHit{ID: h.ID, Score: dot(uq, v)})
			}
		}
		first, rest := hits[:min(k, len(hits))], hits[min(k, len(hits)):]
		read(first)
		if len(out) == k && len(rest) > 0 {
			kth := out[0].Score
			for _, h := range out[1:] {
				kth = min(kth, h.Score)
			}
			rest = slices.DeleteFunc(rest, func(h VectorHit) bool {
				return h.Err > 0 && float64(h.Score)+float64(h.Err) < float64(kth)
			})
		}
		read(rest)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b VectorHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out[:min(k, len(out))], nil
}

// norm2 is the Euclidean norm of v summed in float64, and false when a
// component is not finite or v is all zeros.
func norm2(v []float32) (float64, bool) {
	var sum float64
	for _, c := range v {
		f := float64(c)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false
		}
		sum += f * f
	}
	return math.Sqrt(sum), sum > 0
}

// normalize divides v by its norm in place as the vector file divides a
// row it stores (each component times the float64 inverse of the norm),
// and reports false, leaving v, when v has no direction.
func normalize(v []float32) bool {
	n, ok := norm2(v)
	if !ok {
		return false
	}
	inv := 1 / n
	for i, c := range v {
		v[i] = float32(float64(c) * inv)
	}
	return true
}

// unitQuery is q divided by its norm as the vector file divides a query
// (each component over the float64 norm); nil when q has no direction.
func unitQuery(q []float32) []float32 {
	n, ok := norm2(q)
	if !ok {
		return nil
	}
	u := make([]float32, len(q))
	for i, c := range q {
		u[i] = float32(float64(c) / n)
	}
	return u
}

// NearestVectors returns up to k records whose vectors are nearest q by
// cosine similarity, best first, as the vector side of a flat recall
// finds them: the archive's vector index (opened if it is not), its
// candidates rescored from the stored vectors when it keeps only
// approximations of them. It is for measuring the vector search against
// an exact reference.
func (e *Engine) NearestVectors(q []float32, k int) ([]VectorHit, error) {
	if err := e.checkOpen(); err != nil {
		return nil, err
	}
	e.swapMu.RLock()
	defer e.swapMu.RUnlock()
	s, err := e.searchVector(q, k)
	if err != nil {
		return nil, err
	}
	out := make([]VectorHit, len(s))
	for i, h := range s {
		out[i] = VectorHit{ID: h.id, Score: float32(h.score)}
	}
	return out, nil
}
