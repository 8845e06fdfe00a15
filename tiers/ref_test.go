package tiers_test

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/hmo-dev/hmo/tiers"
)

// refModel is a naive implementation of the membership rules of doc.go,
// written from the rules and not from the Manager: after every operation
// it recomputes everything from scratch.
type refModel struct {
	opts   tiers.Options // resolved
	active map[uint64]tiers.Entry
}

func newRef(o tiers.Options) *refModel {
	return &refModel{opts: o, active: map[uint64]tiers.Entry{}}
}

func refAbove(a, b tiers.Entry) bool {
	if a.P != b.P {
		return a.P > b.P
	}
	return a.ID > b.ID
}

func refRank(es []tiers.Entry) {
	slices.SortFunc(es, func(a, b tiers.Entry) int {
		if refAbove(a, b) {
			return -1
		}
		return 1
	})
}

// assign computes the tiers of the active set; excess is tier 3, in rank
// order (lowest last).
func (r *refModel) assign() (tier map[uint64]uint8, excess []uint64) {
	seqs := map[uint64]bool{}
	for _, e := range r.active {
		seqs[e.SessionSeq] = true
	}
	sorted := slices.Sorted(maps.Keys(seqs))
	recent := map[uint64]bool{}
	if lim(r.opts.RecentSessions) > 0 {
		for _, s := range sorted[max(0, len(sorted)-lim(r.opts.RecentSessions)):] {
			recent[s] = true
		}
	}
	var rec, oth []tiers.Entry
	for _, e := range r.active {
		if recent[e.SessionSeq] {
			rec = append(rec, e)
		} else {
			oth = append(oth, e)
		}
	}
	refRank(rec)
	refRank(oth)
	tier = map[uint64]uint8{}
	c1 := min(len(rec), lim(r.opts.Tier1Cap))
	for _, e := range rec[:c1] {
		tier[e.ID] = 1
	}
	k := min(lim(r.opts.PivotalK), lim(r.opts.Tier1Cap)-c1, len(oth))
	for _, e := range oth[:k] {
		tier[e.ID] = 1
	}
	rest := append(slices.Clone(rec[c1:]), oth[k:]...)
	refRank(rest)
	for i, e := range rest {
		if i < lim(r.opts.Tier2Cap) {
			tier[e.ID] = 2
		} else {
			tier[e.ID] = 3
			excess = append(excess, e.ID)
		}
	}
	return tier, excess
}

// settle evicts the lowest-ranked excess record, one at a time, until
// everything fits; it returns the tiers, evicted ids as 3.
func (r *refModel) settle() map[uint64]uint8 {
	evicted := map[uint64]uint8{}
	for {
		tier, excess := r.assign()
		if len(excess) == 0 {
			maps.Copy(tier, evicted)
			return tier
		}
		last := excess[len(excess)-1]
		delete(r.active, last)
		evicted[last] = 3
	}
}

func (r *refModel) score(e tiers.Entry, now time.Time) tiers.Entry {
	e.Sp = math.Max(0, math.Min(1, e.Sp))
	e.P = tiers.Priority(r.opts.Params, e.I0, e.Sp, e.N, now.Sub(e.LastUsed).Hours()/24)
	return e
}

func (r *refModel) add(e tiers.Entry, now time.Time) map[uint64]uint8 {
	r.active[e.ID] = r.score(e, now)
	return r.settle()
}

func (r *refModel) access(e tiers.Entry, now time.Time) map[uint64]uint8 {
	e.N++
	e.LastUsed = now
	r.active[e.ID] = r.score(e, now)
	return r.settle()
}

func (r *refModel) forget(id uint64) map[uint64]uint8 {
	delete(r.active, id)
	return r.settle()
}

func (r *refModel) rescore(now time.Time, sp func(uint64) float64) map[uint64]uint8 {
	for id, e := range r.active {
		e.Sp = sp(id)
		r.active[id] = r.score(e, now)
	}
	return r.settle()
}

// lim resolves a count of Manager.Options: -1 means none.
func lim(v int) int { return max(v, 0) }

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K { return slices.Sorted(maps.Keys(m)) }
