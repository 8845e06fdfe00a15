package retrieve

import "sync"

// The stages' maps from a candidate's id (fuse, mixLists), session
// (sessionPrior) or word (softMatch) to its place are sized to the
// candidates and built on every question; made anew each time they were
// a large share of a tier-served question's garbage. They are taken from
// these pools empty and handed back cleared (clear keeps the buckets, and
// drops the keys, so a pooled map holds no record's text).
var (
	idPlacePool      = sync.Pool{New: func() any { return make(map[uint64]int) }}
	wordPlacePool    = sync.Pool{New: func() any { return make(map[string]int32) }}
	sessionPlacePool = sync.Pool{New: func() any { return make(map[sessionKey]int32) }}
)

// sessionKey is a session by its scope and name: a pair, not a joined
// string, so that no candidate allocates a key (labels hold no NUL, so
// the two are the same key).
type sessionKey struct{ scope, name string }

func getIDPlaces() map[uint64]int { return idPlacePool.Get().(map[uint64]int) }

func putIDPlaces(m map[uint64]int) {
	clear(m)
	idPlacePool.Put(m)
}

func getWordPlaces() map[string]int32 { return wordPlacePool.Get().(map[string]int32) }

func putWordPlaces(m map[string]int32) {
	clear(m)
	wordPlacePool.Put(m)
}

func getSessionPlaces() map[sessionKey]int32 {
	return sessionPlacePool.Get().(map[sessionKey]int32)
}

func putSessionPlaces(m map[sessionKey]int32) {
	clear(m)
	sessionPlacePool.Put(m)
}
