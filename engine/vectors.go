package engine

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/internal/unitvec"
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

// unit decodes the vector of id into dst (of the store's dimensions)
// divided by its norm, exactly as get then normalize make it: false,
// leaving dst undefined, when id has no vector of dst's dimensions or
// it has no direction. For a reader that uses the vector before its
// next read.
func (s storedVectors) unit(id uint64, dst []float32) bool {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], id)
	return decodeUnit(peekValue(s.kv, k[:]), dst)
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
// scores, in id order (neighbouring keys share bbolt pages), then the
// others best first, each unless its bound (VectorHit.Err) rules it
// out: an index score plus its bound below the k-th best exact score
// read so far, which the final k-th can only exceed, so that a hit
// ruled out is below k others in the end. The k-th rises with every
// read, so the reads that follow are ruled out against a higher one:
// the same k, with fewer reads (BENCHMARKS.md, vec8 and read11). A hit
// whose record has no vector of the store's dimensions now (deleted, or
// being re-embedded since the scan) is dropped; one whose vector was
// replaced since is scored as it is now when it is read, and its bound,
// the old vector's, may rule it out first.
func (e *Engine) rescore(qv []float32, hits []VectorHit, k int) ([]VectorHit, error) {
	uq := unitQuery(qv)
	if uq == nil || len(hits) == 0 || k <= 0 {
		return nil, nil
	}
	hits = bestFirst(hits)
	out := make([]VectorHit, 0, len(hits))
	err := e.db.View(func(tx *bolt.Tx) error {
		vs := e.preadVectors(tx)
		whenCold(vs.kv, func() {
			// The candidates' vectors, and their records, which the
			// priors read next, are asked for together.
			ids := make([]uint64, len(hits))
			for i, h := range hits {
				ids[i] = h.ID
			}
			willNeed(vs.kv, ids)
			recs := e.db.preadBucket(tx, bucketRecords)
			willNeed(recs, ids)
			releaseBucket(recs)
		})
		var best kthBest
		v := make([]float32, vs.dims)
		read := func(h VectorHit) {
			if len(v) != len(uq) || !vs.unit(h.ID, v) {
				return
			}
			s := dot(uq, v)
			out = append(out, VectorHit{ID: h.ID, Score: s})
			best.offer(s, k)
		}
		first, rest := hits[:min(k, len(hits))], hits[min(k, len(hits)):]
		slices.SortFunc(first, func(a, b VectorHit) int { return cmp.Compare(a.ID, b.ID) })
		for _, h := range first {
			read(h)
		}
		for _, h := range rest {
			if len(best.s) == k && h.Err > 0 && float64(h.Score)+float64(h.Err) < float64(best.s[0]) {
				continue
			}
			read(h)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, byScore)
	return out[:min(k, len(out))], nil
}

// byScore orders vector hits best first, ties to the lower id.
func byScore(a, b VectorHit) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// bestFirst returns a copy of hits ordered by byScore, each id once: an
// index's answer as it is (best first, distinct ids) is only checked.
// Of an id given twice, one of its hits is kept.
func bestFirst(hits []VectorHit) []VectorHit {
	hits = slices.Clone(hits)
	var buf [256]uint64
	ids := buf[:0]
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	slices.Sort(ids)
	distinct := true
	for i := 1; i < len(ids) && distinct; i++ {
		distinct = ids[i] != ids[i-1]
	}
	if !distinct {
		slices.SortFunc(hits, func(a, b VectorHit) int { return cmp.Compare(a.ID, b.ID) })
		hits = slices.CompactFunc(hits, func(a, b VectorHit) bool { return a.ID == b.ID })
	}
	if !distinct || !slices.IsSortedFunc(hits, byScore) {
		slices.SortFunc(hits, byScore)
	}
	return hits
}

// kthBest keeps the k best exact scores read (a min-heap): s[0] is the
// k-th best once there are k.
type kthBest struct{ s []float32 }

// offer adds score to the best k, dropping the lowest when there are k.
func (b *kthBest) offer(score float32, k int) {
	if len(b.s) < k {
		b.s = append(b.s, score)
		for i := len(b.s) - 1; i > 0; {
			p := (i - 1) / 2
			if !(b.s[i] < b.s[p]) {
				break
			}
			b.s[i], b.s[p] = b.s[p], b.s[i]
			i = p
		}
		return
	}
	if !(score > b.s[0]) {
		return
	}
	b.s[0] = score
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(b.s) && b.s[l] < b.s[m] {
			m = l
		}
		if r := l + 1; r < len(b.s) && b.s[r] < b.s[m] {
			m = r
		}
		if m == i {
			break
		}
		b.s[i], b.s[m] = b.s[m], b.s[i]
		i = m
	}
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

// decodeUnit decodes b, a stored vector of 4*len(v) bytes, into v
// divided by its norm: bit for bit what decodeVector then normalize
// make of it, in one pass over b (unitvec.Decode: four components
// squared and eight scaled at a time, the squares summed in order). It
// reports false, leaving v undefined, when b has another length or the
// vector has no direction (a component not finite, or all zero: the
// float64 sum of the squares of float32 components is finite unless one
// of them is not).
func decodeUnit(b []byte, v []float32) bool { return unitvec.Decode(b, v) }

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
