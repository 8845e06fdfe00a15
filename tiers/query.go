package tiers

import (
	"cmp"
	"slices"
)

// Tier returns the tier of a record: 1, 2, or 3 for any id not active
// (the archive holds every record, so an unknown id is reported as 3).
func (m *Manager) Tier(id uint64) uint8 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.byID[id]; ok {
		return e.Tier
	}
	return Tier3
}

// Entry returns the entry of an active record, or false if the record is
// not in tier 1 or 2.
func (m *Manager) Entry(id uint64) (Entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.byID[id]; ok {
		return e.Entry, true
	}
	return Entry{}, false
}

// Members returns the ids in tier 1 or 2, sorted ascending. Tier 3 (and
// any other number) gives nil: the caller's archive holds it.
func (m *Manager) Members(tier uint8) []uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if tier != Tier1 && tier != Tier2 {
		return nil
	}
	ids := make([]uint64, 0, m.lenLocked(tier))
	for _, list := range [][]*entry{m.rec, m.oth} {
		for _, e := range list {
			if e.Tier == tier {
				ids = append(ids, e.ID)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// Pivotal returns the pivotal part of tier 1 (the highest-priority records
// outside the recent sessions) in rank order, best first.
func (m *Manager) Pivotal() []uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, k := m.bounds()
	ids := make([]uint64, k)
	for i, e := range m.oth[:k] {
		ids[i] = e.ID
	}
	return ids
}

// Len returns the number of records in tier 1 or 2; 0 for any other
// tier.
func (m *Manager) Len(tier uint8) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lenLocked(tier)
}

func (m *Manager) lenLocked(tier uint8) int {
	c1, k := m.bounds()
	switch tier {
	case Tier1:
		return c1 + k
	case Tier2:
		return len(m.rec) + len(m.oth) - c1 - k
	}
	return 0
}

// Entries returns the entries of every active record, sorted by id: the
// state to persist for Restore.
func (m *Manager) Entries() []Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	ptrs := make([]*entry, 0, len(m.byID))
	ptrs = append(append(ptrs, m.rec...), m.oth...)
	slices.SortFunc(ptrs, func(a, b *entry) int { return cmp.Compare(a.ID, b.ID) })
	out := make([]Entry, len(ptrs))
	for i, e := range ptrs {
		out[i] = e.Entry
	}
	return out
}

// Stats returns the counters since New.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stats
	s.Tier1, s.Tier2 = m.lenLocked(Tier1), m.lenLocked(Tier2)
	return s
}
