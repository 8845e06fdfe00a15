package retrieve

import (
	"math/bits"
	"sync"
)

// Maps the stages build and drop within one call, kept for reuse: a
// cleared map keeps its room, so once the pools are warm a question
// allocates none of them. None outlives the call that took it; each is
// cleared when it is put back, so it holds no string of a question
// after it.
var (
	sessionMaps mapPool[session, int32] // a session to its place
	vocabMaps   mapPool[string, int32]  // a word to its index
)

// mapPool keeps cleared maps for reuse. Safe for concurrent use.
type mapPool[K comparable, V any] struct{ p sync.Pool }

// take returns an empty map, one put back before when there is one.
func (m *mapPool[K, V]) take() map[K]V {
	if v, ok := m.p.Get().(map[K]V); ok {
		return v
	}
	return map[K]V{}
}

// drop clears x and keeps it for the next take.
func (m *mapPool[K, V]) drop(x map[K]V) {
	clear(x)
	m.p.Put(x)
}

// session is a candidate's session: the pair, not a joined string, so
// that a key costs no allocation (labels hold no NUL, so the two are the
// same key).
type session struct{ scope, name string }

// places is a table of the candidates' ids to their places (fusion, the
// feedback mix, the reply stage, the context credit), in place of a
// map[uint64]int: the same answers, at a fraction of a map's cost per
// id (about a hundred ids a question, each put and looked up). Open
// addressing with linear probing on a multiplicative hash of the id, at
// most half full. Not safe for concurrent use; take one from placePool
// and drop it when done.
type places struct {
	ids   []uint64
	at    []int32 // 1 + the place of ids[i]; 0: a free slot
	shift uint8   // 64 - log2(len(ids))
	n     int     // ids held
}

var placePool = sync.Pool{New: func() any { return new(places) }}

// takePlaces returns an empty table with room for n ids (it grows past
// them).
func takePlaces(n int) *places {
	p := placePool.Get().(*places)
	p.reset(n)
	return p
}

// dropPlaces keeps p for the next takePlaces.
func dropPlaces(p *places) { placePool.Put(p) }

// reset empties p, with room for n ids before it grows.
func (p *places) reset(n int) {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	if cap(p.ids) < size {
		p.ids, p.at = make([]uint64, size), make([]int32, size)
	} else {
		p.ids, p.at = p.ids[:size], p.at[:size]
		clear(p.at)
	}
	p.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	p.n = 0
}

// slot is where the probe for id starts.
func (p *places) slot(id uint64) int {
	return int((id * 0x9E3779B97F4A7C15) >> p.shift)
}

// get returns id's place.
func (p *places) get(id uint64) (int, bool) {
	mask := len(p.ids) - 1
	for i := p.slot(id); ; i = (i + 1) & mask {
		switch a := p.at[i]; {
		case a == 0:
			return 0, false
		case p.ids[i] == id:
			return int(a - 1), true
		}
	}
}

// put sets id's place (as m[id] = place).
func (p *places) put(id uint64, place int) {
	if 2*(p.n+1) > len(p.ids) {
		p.grow()
	}
	mask := len(p.ids) - 1
	for i := p.slot(id); ; i = (i + 1) & mask {
		switch a := p.at[i]; {
		case a == 0:
			p.ids[i], p.at[i] = id, int32(place+1)
			p.n++
			return
		case p.ids[i] == id:
			p.at[i] = int32(place + 1)
			return
		}
	}
}

// grow doubles the table, keeping what it holds.
func (p *places) grow() {
	ids, at := p.ids, p.at
	p.ids, p.at = make([]uint64, 2*len(ids)), make([]int32, 2*len(ids))
	p.shift--
	p.n = 0
	for i, a := range at {
		if a != 0 {
			p.put(ids[i], int(a-1))
		}
	}
}
