package retrieve

import "sync"

// Maps the stages build and drop within one call, kept for reuse: a
// cleared map keeps its room, so once the pools are warm a question
// allocates none of them. None outlives the call that took it; each is
// cleared when it is put back, so it holds no string of a question
// after it.
var (
	placeMaps   mapPool[uint64, int]    // a candidate's id to its place
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
