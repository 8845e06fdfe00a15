package fts

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// A pooled search's pool is, in the retrieval pipeline, the hits of the
// search the index has just answered for the same question, and its
// words are that question's words followed by the feedback words
// (retrieve's expand: the question, a space, the words). A document's
// BM25F score is a sum over the words in the query's order, each word's
// contribution a function of its idf, the snapshot's field statistics
// and the document's own frequencies and lengths; its coverage is a sum
// of idfs likewise. So, when the statistics and those words' idfs are
// the same and each pool document is the very document (segment and
// number) that search scored, the first search's score and coverage of
// a document are the sums of the pooled search over its first words, to
// the last bit: the pooled search starts each document from them and
// looks up the feedback words alone (scoreLocated), instead of seeking
// the question's words again in every list.

// firstPass is what a search keeps of itself for a pooled search that
// follows: its words, statistics and idfs, and its hits, best first as
// it returned them, with their places, scores and coverage (the idfs of
// the words each says, summed in the query's order, not yet divided).
type firstPass struct {
	terms []string
	st    fieldStats
	idf   []float64
	hits  []passHit
	// covered is whether the hits' coverage was worked out (the search
	// was not asked for engine.TextFilter.NoCoverage).
	covered bool
}

type passHit struct {
	id, seg, doc uint64
	score, cov   float64
}

// sortPassHits orders hits as sortHits orders their TextHits: best
// first, equal scores by id.
func sortPassHits(hits []passHit) {
	slices.SortFunc(hits, func(a, b passHit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
}

// firstPasses keeps the last few searches' firstPass (a few concurrent
// questions each find their own). Safe for concurrent use; the zero
// value is empty and ready.
type firstPasses struct {
	mu   sync.Mutex
	ring [firstPassRing]*firstPass
	next int
	used int // pooled searches that went on from a kept search, for the tests
}

const firstPassRing = 8

// put keeps p, replacing the oldest.
func (r *firstPasses) put(p *firstPass) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ring[r.next] = p
	r.next = (r.next + 1) % firstPassRing
}

// reset forgets every kept search.
func (r *firstPasses) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ring, r.next = [firstPassRing]*firstPass{}, 0
}

// reused is the number of pooled searches that went on from a kept
// search.
func (r *firstPasses) reused() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.used
}

// starts returns, for each pool document of docs, the score and
// coverage a kept search gave it, and how many words of terms that
// search had: the latest one whose words begin terms (fewer of them),
// whose statistics and idfs are st and idf's, and whose hits hold each
// document of docs at its place in the pool (located.at: the pipeline's
// pool is the first search's hits in their order) and where docs found
// it (segID of its segment), and that worked out their coverage when
// covered asks for it. It returns 0 when none did.
func (r *firstPasses) starts(terms []string, st *fieldStats, idf []float64, covered bool, docs []located, segID func(si int) uint64) (int, []passHit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for n := range firstPassRing {
		p := r.ring[(r.next-1-n+2*firstPassRing)%firstPassRing]
		if p == nil || covered && !p.covered || !p.starts(terms, st, idf) {
			continue
		}
		out := make([]passHit, len(docs))
		ok := true
		for i, d := range docs {
			if d.at >= len(p.hits) {
				ok = false
				break
			}
			h := p.hits[d.at]
			if h.id != d.id || h.seg != segID(d.si) || h.doc != uint64(d.doc) {
				ok = false
				break
			}
			out[i] = h
		}
		if ok {
			r.used++
			return len(p.terms), out
		}
	}
	return 0, nil
}

// starts reports whether p's words begin terms, fewer than them, under
// the same statistics and idfs (compared bit for bit).
func (p *firstPass) starts(terms []string, st *fieldStats, idf []float64) bool {
	if len(p.terms) >= len(terms) || len(idf) != len(terms) || !sameBits(p.st.n, st.n) {
		return false
	}
	for f := range nFields {
		if !sameBits(p.st.total[f], st.total[f]) {
			return false
		}
	}
	for i, t := range p.terms {
		if terms[i] != t || !sameBits(p.idf[i], idf[i]) {
			return false
		}
	}
	return true
}

func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
