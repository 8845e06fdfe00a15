package tiers

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Manager keeps the membership of tiers 1 and 2 and the entries of their
// records. It does not hold tier-3 records: the caller's store does.
//
// A Manager is safe for concurrent use; every method takes one mutex. To
// keep the persisted tiers in step with the Manager, call the mutating
// methods in the same order as the caller's store commits their results
// (for example under the store's write lock).
type Manager struct {
	opts Options // filled in by New; immutable
	lim  limits  // resolved counts of opts; immutable

	mu        sync.Mutex        // guards the fields below
	byID      map[uint64]*entry // every active entry (tiers 1 and 2)
	rec, oth  []*entry          // active entries of the recent window / older sessions, ranked
	sess      []sessionCount    // distinct session ordinals of the active entries, ascending
	thr       uint64            // smallest ordinal of the recent window (if hasRecent)
	hasRecent bool              // the recent window is non-empty
	scratch   []*entry          // buffer for repartition and rebuild
	epoch     uint64            // operation counter, for touch
	touched   []*entry          // entries whose tier changed in this operation
	stats     Stats
}

// New returns an empty Manager. A nil opts means all defaults.
func New(opts *Options) (*Manager, error) {
	o, l, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Manager{opts: o, lim: l, byID: make(map[uint64]*entry)}, nil
}

// Options returns the options in effect: defaults filled in, a count that
// is none reported as -1, so that New(&o) gives the same behaviour.
func (m *Manager) Options() Options { return m.opts }

// Add places a new record, scored at now: P from Eq. 5 with Δt = now −
// e.LastUsed (the event time at ingestion). e.P and e.Tier are ignored. It
// returns the record's entry as placed (Tier 3 if it did not make tier 2)
// and the moves, the record's own (from tier 3) included, sorted by id.
//
// Add fails with ErrDuplicate if e.ID is already active; it cannot detect
// an id that is in tier 3 only.
func (m *Manager) Add(e Entry, now time.Time) (Entry, []Move, error) {
	if err := e.check(true); err != nil {
		return Entry{}, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byID[e.ID]; ok {
		return Entry{}, nil, fmt.Errorf("%w: %d", ErrDuplicate, e.ID)
	}
	m.begin()
	ne := &entry{Entry: e}
	ne.Tier = Tier3
	m.score(ne, now)
	m.insert(ne)
	m.settle()
	m.stats.Adds++
	return ne.Entry, m.end(), nil
}

// Access records that a record was returned to a caller: n += 1, t_last
// = now, P recomputed (so Δt = 0). e is the record's header as the caller
// holds it and is authoritative: its I0, N (before this access), Sp,
// Session and SessionSeq replace what the Manager holds; e.LastUsed, e.P
// and e.Tier are ignored.
//
// An active record is re-ranked in place. A tier-3 record is scored now
// and ranked against the active records (at their stored P, lazily
// updated): it is promoted, possibly demoting others, or stays in tier 3.
// Access returns the updated entry for the caller to persist and the
// moves, sorted by id.
func (m *Manager) Access(e Entry, now time.Time) (Entry, []Move, error) {
	if err := e.check(false); err != nil {
		return Entry{}, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.begin()
	cur, ok := m.byID[e.ID]
	if ok && cur.SessionSeq == e.SessionSeq {
		m.rerank(cur, e, now)
		m.settle()
		m.stats.Accesses++
		return cur.Entry, m.end(), nil
	}
	if ok {
		m.remove(cur)
	} else {
		cur = &entry{}
		cur.Tier = Tier3
	}
	m.accessed(cur, e, now)
	m.insert(cur)
	m.settle()
	m.stats.Accesses++
	return cur.Entry, m.end(), nil
}

// accessed applies an access at now to cur: e's fields, cur's tier kept,
// one more access, and its priority scored again.
func (m *Manager) accessed(cur *entry, e Entry, now time.Time) {
	tier := cur.Tier
	cur.Entry = e
	cur.Tier = tier
	if cur.N < math.MaxUint32 {
		cur.N++
	}
	cur.LastUsed = now
	m.score(cur, now)
}

// Rescore recomputes S_p (through sp, if not nil) and P at now for every
// record in tiers 1 and 2, re-ranks them and demotes what falls out: the
// routine update of HMO section 3.3, run for example when the persona
// drift gate fires. sp is called once per active id, in a deterministic
// order (records of the recent sessions first, each group by rank), with
// the Manager's lock held, so it must not call the Manager; it returns
// max(0, cos) (clamped to [0, 1], NaN as 0). A nil sp keeps the stored
// S_p: a decay-only pass. Tier-3 records are never touched.
//
// Cost: O(A log A) for A = Len(1) + Len(2) <= Tier1Cap + Tier2Cap, plus A
// calls of sp; independent of the archive's size.
func (m *Manager) Rescore(now time.Time, sp func(id uint64) float64) []Move {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.begin()
	for _, list := range [][]*entry{m.rec, m.oth} {
		for _, e := range list {
			if sp != nil {
				e.Sp = clampSp(sp(e.ID))
			}
			m.score(e, now)
		}
	}
	m.rebuild()
	m.settle()
	m.stats.Rescores++
	return m.end()
}

// Forget removes a record (deleted by the caller) and returns the moves of
// the others, sorted by id; the forgotten record itself has no move. An
// id that is not active changes nothing.
func (m *Manager) Forget(id uint64) []Move {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byID[id]
	if !ok {
		return nil
	}
	m.begin()
	m.remove(e)
	e.gone = true
	m.settle()
	m.stats.Forgets++
	return m.end()
}

// Restore replaces the Manager's state with entries, as persisted (their
// P and Tier are read; P is not recomputed), and applies the rules. It
// returns the moves relative to each entry's persisted Tier (0 counts as
// 3): none if the entries are what Entries returned, or more if the
// options changed. Entries given with Tier 3 compete like the others.
// The result depends on the entries only, not on their order. On error
// nothing changes.
//
// Cost: O(A log A) for A = len(entries).
func (m *Manager) Restore(entries []Entry) ([]Move, error) {
	byID := make(map[uint64]*entry, len(entries))
	for _, e := range entries {
		if err := e.checkRestore(); err != nil {
			return nil, err
		}
		if _, dup := byID[e.ID]; dup {
			return nil, fmt.Errorf("%w: %d", ErrDuplicate, e.ID)
		}
		ne := &entry{Entry: e}
		ne.Sp = clampSp(ne.Sp)
		if ne.Tier == 0 {
			ne.Tier = Tier3
		}
		byID[e.ID] = ne
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.begin()
	m.byID, m.rec, m.oth, m.sess = byID, nil, nil, nil
	for _, e := range byID {
		m.sessAdd(e.SessionSeq)
	}
	m.rebuild()
	m.settle()
	return m.end(), nil
}

// score computes e.P at now and counts it.
func (m *Manager) score(e *entry, now time.Time) {
	e.Sp = clampSp(e.Sp)
	e.P = Priority(m.opts.Params, e.I0, e.Sp, e.N, days(now, e.LastUsed))
	m.stats.Scored++
}

// begin starts an operation whose moves end collects.
func (m *Manager) begin() {
	m.epoch++
	m.touched = m.touched[:0]
}

// end returns the net moves of the operation, sorted by id, and counts
// them.
func (m *Manager) end() []Move {
	var moves []Move
	for _, e := range m.touched {
		if e.gone || e.Tier == e.orig {
			continue
		}
		moves = append(moves, Move{ID: e.ID, From: e.orig, To: e.Tier})
		if e.Tier < e.orig {
			m.stats.Promotions++
		} else {
			m.stats.Demotions++
		}
	}
	clear(m.touched)
	m.touched = m.touched[:0]
	slices.SortFunc(moves, func(a, b Move) int { return cmp.Compare(a.ID, b.ID) })
	return moves
}
