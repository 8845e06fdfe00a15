package retrieve

import "sync"

// Maps the stages build and drop within one call, kept for reuse: a
// cleared map keeps its room, so once the pools are warm a question
// allocates none of them. None outlives the call that took it; each is
// cleared when it is put back, so it holds no string of a question
// after it.
var (
	placeMaps   = sync.Pool{New: func() any { return map[uint64]int{} }}
	sessionMaps = sync.Pool{New: func() any { return map[session]int32{} }}
	vocabMaps   = sync.Pool{New: func() any { return map[string]int32{} }}
)

// session is a candidate's session: the pair, not a joined string, so
// that a key costs no allocation (labels hold no NUL, so the two are the
// same key).
type session struct{ scope, name string }

// takePlaces returns an empty map from a candidate's id to its place.
func takePlaces() map[uint64]int { return placeMaps.Get().(map[uint64]int) }

// dropPlaces clears m and keeps it for the next takePlaces.
func dropPlaces(m map[uint64]int) {
	clear(m)
	placeMaps.Put(m)
}
