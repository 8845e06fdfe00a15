package tiers

import (
	"math"
	"time"
)

// Reweigh replaces the initial importance I0 of an active record (for
// example when a language model scored it after it was added), recomputes
// its P at now without counting an access, and re-ranks it. It returns the
// updated entry and the moves, sorted by id, and false when the record is
// not in tier 1 or 2 (the caller's store then holds its header). I0 is
// clamped to [1, 10]; NaN leaves it unchanged.
func (m *Manager) Reweigh(id uint64, i0 float64, now time.Time) (Entry, []Move, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.byID[id]
	if !ok {
		return Entry{}, nil, false
	}
	m.begin()
	m.remove(cur)
	tier := cur.Tier
	if !math.IsNaN(i0) {
		cur.I0 = min(max(i0, 1), 10)
	}
	cur.Tier = tier
	m.score(cur, now)
	m.insert(cur)
	m.settle()
	return cur.Entry, m.end(), true
}
