package tiers

import (
	"slices"
	"sort"
	"time"
)

// entry is an active record (tier 1 or 2) or one being placed.
type entry struct {
	Entry       // Entry.Tier is the current tier
	inRec bool  // in Manager.rec (else Manager.oth)
	orig  uint8 // tier at the start of the current operation
	epoch uint64
	gone  bool // forgotten during the current operation: no move reported
}

// above reports whether a ranks above b: higher P first, then the larger
// (newer) id. The order is total since ids are unique.
func above(a, b *entry) bool {
	if a.P != b.P {
		return a.P > b.P
	}
	return a.ID > b.ID
}

func compare(a, b *entry) int {
	switch {
	case a == b:
		return 0
	case above(a, b):
		return -1
	}
	return 1
}

// search returns the index of e in list, or where it would be inserted.
func search(list []*entry, e *entry) int {
	return sort.Search(len(list), func(i int) bool { return !above(list[i], e) })
}

// sessionCount is one distinct session ordinal among the active entries.
type sessionCount struct {
	seq uint64
	n   int
}

// bounds returns the sizes of the two parts of tier 1: c1 records of the
// recent sessions (the top of rec) and k pivotal records (the top of oth).
func (m *Manager) bounds() (c1, k int) {
	c1 = min(len(m.rec), m.lim.tier1)
	k = min(m.lim.pivotal, m.lim.tier1-c1, len(m.oth))
	return c1, k
}

// pool is the number of active entries outside tier 1: tier 2 plus any
// excess waiting to be evicted.
func (m *Manager) pool() int {
	c1, k := m.bounds()
	return len(m.rec) - c1 + len(m.oth) - k
}

// isRecent reports whether a session ordinal is in the recent window.
func (m *Manager) isRecent(seq uint64) bool {
	return m.hasRecent && seq >= m.thr
}

// window recomputes the recent window from the session counts and
// reports whether it changed.
func (m *Manager) window() bool {
	thr, has := uint64(0), false
	if n := len(m.sess); m.lim.recent > 0 && n > 0 {
		has = true
		thr = m.sess[max(0, n-m.lim.recent)].seq
	}
	changed := has != m.hasRecent || (has && thr != m.thr)
	m.thr, m.hasRecent = thr, has
	return changed
}

func (m *Manager) sessAdd(seq uint64) {
	i, ok := slices.BinarySearchFunc(m.sess, seq, func(s sessionCount, t uint64) int {
		switch {
		case s.seq < t:
			return -1
		case s.seq > t:
			return 1
		}
		return 0
	})
	if ok {
		m.sess[i].n++
		return
	}
	m.sess = slices.Insert(m.sess, i, sessionCount{seq: seq, n: 1})
}

func (m *Manager) sessDel(seq uint64) {
	i := sort.Search(len(m.sess), func(i int) bool { return m.sess[i].seq >= seq })
	if i == len(m.sess) || m.sess[i].seq != seq {
		return
	}
	if m.sess[i].n--; m.sess[i].n == 0 {
		m.sess = slices.Delete(m.sess, i, i+1)
	}
}

// touch records e's tier at the start of the operation, once.
func (m *Manager) touch(e *entry) {
	if e.epoch != m.epoch {
		e.epoch, e.orig = m.epoch, e.Tier
		m.touched = append(m.touched, e)
	}
}

func (m *Manager) setTier(e *entry, t uint8) {
	if e.Tier != t {
		m.touch(e)
		e.Tier = t
	}
}

// assign sets the tier implied by position for list[lo:hi]: 1 above cut,
// else 2.
func (m *Manager) assign(list []*entry, lo, hi, cut int) {
	lo, hi = max(lo, 0), min(hi, len(list))
	for i := lo; i < hi; i++ {
		t := Tier2
		if i < cut {
			t = Tier1
		}
		m.setTier(list[i], t)
	}
}

func (m *Manager) assignAll() {
	c1, k := m.bounds()
	m.assign(m.rec, 0, len(m.rec), c1)
	m.assign(m.oth, 0, len(m.oth), k)
}

// fix re-assigns the entries near the tier-1 boundaries after one entry
// was inserted into or removed from a list. Positions shift by at most one
// and each boundary moves by at most one, so only entries within two
// places of a boundary can change tier.
func (m *Manager) fix(c1o, ko int) {
	c1, k := m.bounds()
	m.assign(m.rec, min(c1o, c1)-2, max(c1o, c1)+2, c1)
	m.assign(m.oth, min(ko, k)-2, max(ko, k)+2, k)
}

// insert places e (not in any list) into the active set: O(log A) search,
// an O(A) pointer copy, O(1) tier fixes, or an O(A) repartition when the
// recent window changes.
func (m *Manager) insert(e *entry) {
	m.byID[e.ID] = e
	m.sessAdd(e.SessionSeq)
	if oldThr, had := m.thr, m.hasRecent; m.window() {
		m.place(e)
		if had && m.hasRecent && m.thr > oldThr {
			// A new session entered the window and the oldest left it.
			m.leaveWindow()
		} else {
			m.repartition()
		}
		return
	}
	c1o, ko := m.bounds()
	list := m.place(e)
	m.fix(c1o, ko)
	c1, k := m.bounds()
	cut := k
	if e.inRec {
		cut = c1
	}
	m.assign(list, search(list, e), search(list, e)+1, cut)
}

// rerank applies an access (e, at now) to cur, an active entry of the
// same session, and moves it to its new rank within its list. Its
// session stays, so its list, the recent window and the lists' lengths
// (hence the tier-1 boundaries) stay too: what remove and insert would
// leave, with only the entries between its old and new places shifted
// by one (O(distance) pointer copies, rather than two O(A) ones, and no
// repartition when it is its session's only entry), and only those
// re-assigned.
func (m *Manager) rerank(cur *entry, e Entry, now time.Time) {
	list := m.oth
	if cur.inRec {
		list = m.rec
	}
	i := search(list, cur)
	m.accessed(cur, e, now)
	j := search(list[:i], cur) // the entries above its old place that it now passes
	if j < i {
		copy(list[j+1:i+1], list[j:i])
	} else {
		j = i + search(list[i+1:], cur) // those below that now pass it
		copy(list[i:j], list[i+1:j+1])
	}
	list[j] = cur
	c1, k := m.bounds()
	cut := k
	if cur.inRec {
		cut = c1
	}
	// Every entry had its position's tier. The entries between the two
	// places moved by one, towards i: only the one that crossed the cut
	// (now at cut-1 or at cut) can have changed tier, besides cur. An
	// access lifts a record far (P grows with N and recency), and
	// reading every entry in between, each a cache miss, was most of
	// the access.
	lo, hi := min(i, j), max(i, j)+1
	m.assign(list, j, j+1, cut)
	for _, p := range [2]int{cut - 1, cut} {
		if p != j && p >= lo && p < hi {
			m.assign(list, p, p+1, cut)
		}
	}
}

// place inserts e into rec or oth by the current window and returns the
// list.
func (m *Manager) place(e *entry) []*entry {
	e.inRec = m.isRecent(e.SessionSeq)
	list := &m.oth
	if e.inRec {
		list = &m.rec
	}
	*list = slices.Insert(*list, search(*list, e), e)
	return *list
}

// remove takes e out of the active set (its tier is left for the caller).
func (m *Manager) remove(e *entry) {
	c1o, ko := m.bounds()
	list := &m.oth
	if e.inRec {
		list = &m.rec
	}
	if i := search(*list, e); i < len(*list) && (*list)[i] == e {
		*list = slices.Delete(*list, i, i+1)
	}
	m.fix(c1o, ko)
	delete(m.byID, e.ID)
	m.sessDel(e.SessionSeq)
	if m.window() {
		m.repartition()
	}
}

// settle evicts the lowest-ranked records outside tier 1 to tier 3, one
// at a time, until tier 2 fits its capacity. Removing the tail of a list
// beyond tier 1 leaves the tier-1 boundaries where they are; an eviction
// that empties a recent session moves the window and repartitions.
func (m *Manager) settle() {
	for m.pool() > m.lim.tier2 {
		c1, k := m.bounds()
		var v *entry
		hasR, hasO := len(m.rec) > c1, len(m.oth) > k
		if hasR && (!hasO || above(m.oth[len(m.oth)-1], m.rec[len(m.rec)-1])) {
			v = m.rec[len(m.rec)-1]
			m.rec = m.rec[:len(m.rec)-1]
		} else {
			v = m.oth[len(m.oth)-1]
			m.oth = m.oth[:len(m.oth)-1]
		}
		m.setTier(v, Tier3)
		delete(m.byID, v.ID)
		m.sessDel(v.SessionSeq)
		if m.window() {
			m.repartition()
		}
	}
}

// repartition splits the active entries by the current window: a merge of
// the two sorted lists, O(A), then a full tier assignment.
func (m *Manager) repartition() {
	m.stats.Repartitions++
	buf := m.scratch[:0]
	i, j := 0, 0
	for i < len(m.rec) || j < len(m.oth) {
		if j == len(m.oth) || (i < len(m.rec) && above(m.rec[i], m.oth[j])) {
			buf = append(buf, m.rec[i])
			i++
		} else {
			buf = append(buf, m.oth[j])
			j++
		}
	}
	m.split(buf)
}

// leaveWindow moves the entries of the sessions that left the recent
// window (moved forward) from rec to oth, and re-assigns the tiers that
// can change: what repartition does, without touching every entry. Each
// leaving entry is placed by binary search (rec and the leaving entries
// are ranked, so their places in oth ascend) and oth is shifted by
// pointer copies. Before, oth's tier-1 entries were its first k <=
// pivotal; after, they are its first k' <= pivotal; the n entries moved
// in shift the old ones by at most n. So the first pivotal+n entries of
// oth and the moved entries are all that can change tier.
func (m *Manager) leaveWindow() {
	m.stats.Repartitions++
	moved := m.scratch[:0]
	keep := m.rec[:0]
	for _, e := range m.rec {
		if m.isRecent(e.SessionSeq) {
			keep = append(keep, e)
		} else {
			e.inRec = false
			moved = append(moved, e)
		}
	}
	clear(m.rec[len(keep):])
	m.rec = keep
	n, old := len(moved), len(m.oth)
	pos := make([]int, n)
	for j, e := range moved {
		pos[j] = search(m.oth, e)
	}
	m.oth = slices.Grow(m.oth, n)[:old+n]
	hi := old // the original entries at pos[j] and after, up to hi, shift by j+1
	for j := n - 1; j >= 0; j-- {
		p := pos[j]
		copy(m.oth[p+j+1:hi+j+1], m.oth[p:hi])
		m.oth[p+j] = moved[j]
		hi = p
	}
	for _, e := range moved {
		m.setTier(e, Tier2) // tier 1 again below if within the first k
	}
	clear(moved)
	m.scratch = moved[:0]
	c1, k := m.bounds()
	m.assign(m.rec, 0, len(m.rec), c1)
	m.assign(m.oth, 0, m.lim.pivotal+n, k)
}

// rebuild sorts every active entry afresh, O(A log A): after Rescore or
// Restore changed the priorities.
func (m *Manager) rebuild() {
	buf := m.scratch[:0]
	for _, e := range m.byID {
		buf = append(buf, e)
	}
	slices.SortFunc(buf, compare)
	m.window()
	m.split(buf)
}

// split distributes the ranked entries of buf into rec and oth and
// assigns every tier.
func (m *Manager) split(buf []*entry) {
	m.rec, m.oth = m.rec[:0], m.oth[:0]
	for _, e := range buf {
		e.inRec = m.isRecent(e.SessionSeq)
		if e.inRec {
			m.rec = append(m.rec, e)
		} else {
			m.oth = append(m.oth, e)
		}
	}
	clear(buf)
	m.scratch = buf[:0]
	m.assignAll()
}
