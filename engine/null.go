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
	var buf [nullSample]float64
	sims := buf[:0]
	if len(vecs) > nullSample {
		sims = make([]float64, 0, len(vecs))
	}
	sims = sims[:len(vecs)]
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
	if e.tiers == nil {
		// The archive search that follows opens the vector index: open
		// it first, so that the sample reads its rows (sampleIndex). Not
		// under c.mu: writers hold wmu when they invalidate the cache.
		_, _ = e.vectorIndex()
	}
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
// the id space: for each of the ids 1, 1+step, ... the first id at or
// above it that has a vector. The vector index's rows are read when it
// can return them (sampleIndex), bbolt's copies otherwise.
func (e *Engine) sampleVectors() [][]float32 {
	if out, ok := e.sampleIndex(); ok {
		return out
	}
	// An index that keeps only approximations rescores from bbolt's
	// vectors normalised as a float32 index keeps its rows: the sample
	// is those rows, as sampleIndex reads them from such an index.
	e.vecMu.RLock()
	r, unit := e.vec.(RescoredVectorIndex)
	e.vecMu.RUnlock()
	unit = unit && r.RescoreCandidates(1) > 0
	var out [][]float32
	_ = e.db.View(func(tx *bolt.Tx) error {
		next := e.preadVectors(tx).next
		out = sampleIDs(tx.Bucket(bucketRecords).Sequence(), func(from uint64) (uint64, []float32, bool) {
			id, v, ok := next(from)
			if v != nil && unit && !normalize(v) {
				v = nil
			}
			return id, v, ok
		})
		return nil
	})
	return out
}

// sampleIndex is sampleVectors read from the vector index's rows, without
// faulting in a bbolt page (and its cached neighbours) per sampled
// vector: the same ids and the same vectors, but for the last bit of a
// component where normalising again changed it (the index keeps each
// vector divided by its norm). It uses the index only if it is open (a
// flat query opens it first, a tiered one's archive search). It reports
// false, and bbolt is read, when the index is not open, cannot return its
// vectors, has not applied the whole change log, or fails to read a row
// (a damaged row is reported when the index is next opened and verified).
func (e *Engine) sampleIndex() ([][]float32, bool) {
	e.vecMu.RLock()
	vec := e.vec
	e.vecMu.RUnlock()
	r, ok := vec.(VectorReader)
	if !ok || !r.KeepsVectors() {
		return nil, false
	}
	var last, logged uint64
	_ = e.db.View(func(tx *bolt.Tx) error {
		last = tx.Bucket(bucketRecords).Sequence()
		logged = tx.Bucket(bucketChanges).Sequence()
		return nil
	})
	if vec.Watermark() < logged {
		return nil, false
	}
	var failed error
	out := sampleIDs(last, func(from uint64) (uint64, []float32, bool) {
		id, v, ok, err := r.NextVector(from)
		if err != nil {
			failed = err
			return 0, nil, false
		}
		if len(v) != e.dims {
			v = nil
		}
		return id, v, ok
	})
	if failed != nil {
		return nil, false
	}
	return out, true
}

// sampleIDs returns the vectors next finds at or above the ids 1,
// 1+step, ... up to last, step spreading nullSample of them over the id
// space; an id found twice counts once. next returns the id it found,
// its vector (nil when unusable: skipped) and false when there is none.
func sampleIDs(last uint64, next func(from uint64) (uint64, []float32, bool)) [][]float32 {
	var out [][]float32
	step := max(last/nullSample, 1)
	var prev uint64
	for id := uint64(1); id <= last && len(out) < nullSample; id += step {
		found, vec, ok := next(id)
		if !ok {
			break
		}
		if found == prev {
			continue
		}
		prev = found
		if vec != nil {
			out = append(out, vec)
		}
	}
	return out
}
