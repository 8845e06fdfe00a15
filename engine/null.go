package engine

import (
	"math"
	"sync"

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

// nullCache keeps the sampled vectors between queries. It is resampled
// when the store has grown or shrunk by a tenth since, when the
// dimensions change (Reindex), and after every Forget or Update, so a
// deleted record's vector does not linger. Safe for concurrent use.
type nullCache struct {
	mu      sync.Mutex // guards the fields below
	vecs    [][]float32
	records int64
}

func (c *nullCache) invalidate() {
	c.mu.Lock()
	c.vecs = nil
	c.mu.Unlock()
}

// vectorNull returns the query's null statistics over the sample.
func (e *Engine) vectorNull(qv []float32) nullStats {
	if qv == nil {
		return nullStats{}
	}
	vecs := e.nullVectors()
	if len(vecs) < 8 {
		return nullStats{}
	}
	var sum float64
	sims := make([]float64, len(vecs))
	for i, v := range vecs {
		if len(v) != len(qv) {
			return nullStats{}
		}
		sims[i] = float64(dot(qv, v))
		sum += sims[i]
	}
	mean := sum / float64(len(sims))
	var sq float64
	for _, s := range sims {
		sq += (s - mean) * (s - mean)
	}
	return nullStats{mean: mean, sd: math.Sqrt(sq / float64(len(sims)-1))}
}

// nullVectors returns the cached sample, resampling it when stale.
func (e *Engine) nullVectors() [][]float32 {
	c := &e.null
	c.mu.Lock()
	defer c.mu.Unlock()
	n := e.records.Load()
	if c.vecs != nil && len(c.vecs[0]) == e.dims && abs64(n-c.records)*10 <= c.records {
		return c.vecs
	}
	c.vecs, c.records = e.sampleVectors(), n
	if len(c.vecs) == 0 {
		c.vecs = nil
	}
	return c.vecs
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// sampleVectors reads up to nullSample vectors at ids spread evenly over
// the id space.
func (e *Engine) sampleVectors() [][]float32 {
	var out [][]float32
	_ = e.db.View(func(tx *bolt.Tx) error {
		vb := tx.Bucket(bucketVectors)
		last := tx.Bucket(bucketRecords).Sequence()
		step := max(last/nullSample, 1)
		c := vb.Cursor()
		var prev []byte
		for id := uint64(1); id <= last && len(out) < nullSample; id += step {
			k, v := c.Seek(u64key(id))
			if k == nil {
				break
			}
			if prev != nil && string(k) == string(prev) {
				continue
			}
			prev = k
			if vec, err := decodeVector(v, e.dims); err == nil {
				out = append(out, vec)
			}
		}
		return nil
	})
	return out
}
