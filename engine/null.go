package engine

import (
	"math"

	bolt "go.etcd.io/bbolt"
)

// nullSample is how many stored vectors a query is compared with to
// learn what similarity an unrelated record has for it.
const nullSample = 256

// nullStats are the mean and standard deviation of a query's cosine
// similarity to records spread evenly over the store: the similarity an
// unrelated record has for this query in this store. The calibrated
// relevance (retrieve.Relevance) measures a candidate's cosine against
// them, so it means the same whatever the query's words and the store's
// size. Zero when the store has too few records to tell.
type nullStats struct{ mean, sd float64 }

// vectorNull samples up to nullSample vectors at ids spread evenly over
// the id space.
func (e *Engine) vectorNull(qv []float32) nullStats {
	if qv == nil {
		return nullStats{}
	}
	var sims []float64
	_ = e.db.View(func(tx *bolt.Tx) error {
		vb := tx.Bucket(bucketVectors)
		last := tx.Bucket(bucketRecords).Sequence()
		step := max(last/nullSample, 1)
		c := vb.Cursor()
		var prev []byte
		for id := uint64(1); id <= last && len(sims) < nullSample; id += step {
			k, v := c.Seek(u64key(id))
			if k == nil {
				break
			}
			if prev != nil && string(k) == string(prev) {
				continue
			}
			prev = k
			vec, err := decodeVector(v, e.dims)
			if err != nil {
				continue
			}
			sims = append(sims, float64(dot(qv, vec)))
		}
		return nil
	})
	if len(sims) < 8 {
		return nullStats{}
	}
	var sum, sq float64
	for _, s := range sims {
		sum += s
	}
	mean := sum / float64(len(sims))
	for _, s := range sims {
		sq += (s - mean) * (s - mean)
	}
	return nullStats{mean: mean, sd: math.Sqrt(sq / float64(len(sims)-1))}
}
