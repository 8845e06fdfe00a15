package fts

import (
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/hmo-dev/hmo/engine"
)

// Analysed remembers the analysis of the documents given to the Memory
// indexes that share it, so that a document added again with the same
// text (HMO's tiers move records between their indexes, and Tier 1's
// records are also in Tier 2's) is not analysed again. It holds the last
// Capacity documents analysed, keyed by id and a hash of their text
// fields. Safe for concurrent use.
type Analysed struct {
	seed maphash.Seed

	bound sync.Mutex
	an    Analyzer // the analyzer of the indexes sharing it; "" until the first

	mu   sync.Mutex // guards the fields below
	docs map[uint64]*docAnalysis
	ring []uint64 // ids in the order they were stored; the oldest goes first
	next int      // the ring's slot to fill next
}

// DefaultAnalysedCapacity is the default number of documents an Analysed
// holds: the default capacity of HMO's two tiers.
const DefaultAnalysedCapacity = 4352

// NewAnalysed returns an empty cache of the analysis of capacity
// documents (DefaultAnalysedCapacity when capacity <= 0).
func NewAnalysed(capacity int) *Analysed {
	if capacity <= 0 {
		capacity = DefaultAnalysedCapacity
	}
	return &Analysed{seed: maphash.MakeSeed(), docs: map[uint64]*docAnalysis{}, ring: make([]uint64, 0, capacity)}
}

// docAnalysis is a document's distinct indexed terms with their
// frequency in each field, and its field lengths. The terms are one
// string, the i-th ending at ends[i], and tf[i] is the i-th's: a few
// objects per document rather than one per term, for the collector (a
// tier's Analysed holds thousands). It is not changed once made.
type docAnalysis struct {
	sum   uint64 // hash of the text fields
	terms string
	ends  []uint32
	tf    [][nFields]int32
	lens  [nFields]int
}

// term returns the i-th term.
func (an *docAnalysis) term(i int) string {
	start := uint32(0)
	if i > 0 {
		start = an.ends[i-1]
	}
	return an.terms[start:an.ends[i]]
}

// bind ties a to the indexes of analyzer an: an Analysed holds one
// analyzer's analysis. A nil a binds nothing.
func (a *Analysed) bind(an Analyzer) error {
	if a == nil {
		return nil
	}
	a.bound.Lock()
	defer a.bound.Unlock()
	if a.an != "" && a.an != an {
		return fmt.Errorf("%w: one Analysed shared by analyzers %q and %q", ErrInvalidOption, a.an, an)
	}
	a.an = an
	return nil
}

func (a *Analysed) hash(d *engine.TextDoc) uint64 {
	var h maphash.Hash
	h.SetSeed(a.seed)
	for _, f := range docFields(d) {
		h.WriteString(f)
		h.WriteByte(0)
	}
	return h.Sum64()
}

// get returns d's analysis if it is held.
func (a *Analysed) get(d *engine.TextDoc, sum uint64) *docAnalysis {
	a.mu.Lock()
	defer a.mu.Unlock()
	if an := a.docs[d.ID]; an != nil && an.sum == sum {
		return an
	}
	return nil
}

// put stores an, the analysis of document id.
func (a *Analysed) put(id uint64, an *docAnalysis) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.docs[id]; ok {
		a.docs[id] = an // its slot in the ring stays
		return
	}
	if len(a.ring) < cap(a.ring) {
		a.ring = append(a.ring, id)
	} else {
		delete(a.docs, a.ring[a.next])
		a.ring[a.next] = id
		a.next = (a.next + 1) % len(a.ring)
	}
	a.docs[id] = an
}
