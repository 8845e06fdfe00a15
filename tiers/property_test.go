package tiers_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/tiers"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// harness drives a Manager the way the engine will: it keeps every
// record's header (the "store") and each record's tier as persisted
// through the returned moves only.
type harness struct {
	t       *testing.T
	rng     *rand.Rand
	m       *tiers.Manager
	opts    tiers.Options
	ref     *refModel // nil: invariants only
	headers map[uint64]tiers.Entry
	ids     []uint64 // keys of headers, ascending
	tier    map[uint64]uint8
	now     time.Time
	nextID  uint64
	seq     uint64
	log     []string
	stats   tiers.Stats // counters of Managers replaced by restoreCheck
}

func newHarness(t *testing.T, seed uint64, o *tiers.Options, withRef bool) *harness {
	t.Helper()
	m, err := tiers.New(o)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{
		t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), m: m, opts: m.Options(),
		headers: map[uint64]tiers.Entry{}, tier: map[uint64]uint8{}, now: t0, nextID: 1, seq: 1,
	}
	if withRef {
		h.ref = newRef(h.opts)
	}
	return h
}

// apply persists moves the way the engine does and checks each against
// the persisted tier.
func (h *harness) apply(op string, moves []tiers.Move, gone uint64) {
	h.t.Helper()
	h.log = append(h.log, fmt.Sprint(op, moves))
	if !slices.IsSortedFunc(moves, func(a, b tiers.Move) int { return int(a.ID) - int(b.ID) }) {
		h.t.Fatalf("%s: moves not sorted by id: %v", op, moves)
	}
	for _, mv := range moves {
		if mv.ID == gone {
			h.t.Fatalf("%s: move %v of the forgotten record", op, mv)
		}
		if _, ok := h.headers[mv.ID]; !ok {
			h.t.Fatalf("%s: move %v of an unknown record", op, mv)
		}
		if got := h.tierOf(mv.ID); got != mv.From {
			h.t.Fatalf("%s: move %v, but the record was persisted in tier %d", op, mv, got)
		}
		if mv.From == mv.To || mv.To < 1 || mv.To > 3 {
			h.t.Fatalf("%s: bad move %v", op, mv)
		}
		h.tier[mv.ID] = mv.To
		if mv.To == 3 {
			delete(h.tier, mv.ID) // absent means tier 3
		}
	}
}

func tierIn(m map[uint64]uint8, id uint64) uint8 {
	if t, ok := m[id]; ok {
		return t
	}
	return 3
}

func (h *harness) tierOf(id uint64) uint8 {
	if t, ok := h.tier[id]; ok {
		return t
	}
	return 3
}

// check verifies the invariants after an operation; want is the
// reference model's tiers (nil without a model).
func (h *harness) check(op string, want map[uint64]uint8) {
	h.t.Helper()
	l1, l2 := h.m.Len(1), h.m.Len(2)
	if l1 > lim(h.opts.Tier1Cap) || l2 > lim(h.opts.Tier2Cap) {
		h.t.Fatalf("%s: tier sizes %d, %d exceed caps %d, %d", op, l1, l2, h.opts.Tier1Cap, h.opts.Tier2Cap)
	}
	// No record is lost: the tiers persisted from the moves alone are
	// the Manager's, and every other stored record is in tier 3.
	got := map[uint64]uint8{}
	for _, t := range []uint8{1, 2} {
		for _, id := range h.m.Members(t) {
			got[id] = t
			if _, ok := h.headers[id]; !ok {
				h.t.Fatalf("%s: tier %d holds %d, which is not in the store", op, t, id)
			}
		}
	}
	if len(got) != l1+l2 {
		h.t.Fatalf("%s: members %d, Len %d + %d", op, len(got), l1, l2)
	}
	for id, per := range h.tier {
		if g := tierIn(got, id); g != per {
			h.t.Fatalf("%s: record %d: Manager says tier %d, moves say %d", op, id, g, per)
		}
	}
	for id, g := range got {
		if per := h.tierOf(id); per != g {
			h.t.Fatalf("%s: record %d: Manager says tier %d, moves say %d", op, id, g, per)
		}
	}
	for id, w := range want {
		if g := tierIn(got, id); g != w {
			h.t.Fatalf("%s: record %d in tier %d, reference says %d", op, id, g, w)
		}
	}
	for id := range got {
		if want != nil && want[id] == 0 {
			h.t.Fatalf("%s: record %d in tier %d, reference does not have it", op, id, got[id])
		}
	}
	if h.ref == nil && len(h.log)%10 != 0 && !strings.HasPrefix(op, "rescore") {
		return
	}
	entries := h.m.Entries()
	if len(entries) != l1+l2 {
		h.t.Fatalf("%s: %d entries, tiers hold %d + %d", op, len(entries), l1, l2)
	}
	for _, e := range entries {
		if _, ok := h.headers[e.ID]; !ok {
			h.t.Fatalf("%s: active entry %d not in the store", op, e.ID)
		}
		h.headers[e.ID] = e // persist the active entries
	}
	if h.ref != nil {
		var ref []tiers.Entry
		for _, id := range sortedKeys(h.ref.active) {
			e := h.ref.active[id]
			e.Tier = want[id]
			ref = append(ref, e)
		}
		if !equalEntries(entries, ref) {
			h.t.Fatalf("%s: entries differ from the reference\n got %v\nwant %v", op, entries, ref)
		}
	}
}

func equalEntries(a, b []tiers.Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.ID != y.ID || x.SessionSeq != y.SessionSeq || x.I0 != y.I0 || x.N != y.N ||
			!x.LastUsed.Equal(y.LastUsed) || x.Sp != y.Sp || x.P != y.P || x.Tier != y.Tier {
			return false
		}
	}
	return true
}

func (h *harness) randomID() (uint64, bool) {
	if len(h.ids) == 0 {
		return 0, false
	}
	return h.ids[h.rng.IntN(len(h.ids))], true
}

// step runs one random operation.
func (h *harness) step(sessionLen int, oldSessions bool) {
	h.t.Helper()
	h.now = h.now.Add(time.Duration(h.rng.IntN(48)) * time.Hour)
	var want map[uint64]uint8
	switch r := h.rng.IntN(100); {
	case r < 45:
		if h.rng.IntN(sessionLen) == 0 {
			h.seq++
		}
		seq := h.seq
		if oldSessions && h.rng.IntN(20) == 0 {
			seq = uint64(h.rng.IntN(int(h.seq))) + 1
		}
		e := tiers.Entry{
			ID: h.nextID, Session: fmt.Sprint("s", seq), SessionSeq: seq,
			I0: float64(h.rng.IntN(11)), Sp: float64(h.rng.IntN(5)) / 4,
			LastUsed: h.now.Add(-time.Duration(h.rng.IntN(30*24)) * time.Hour),
		}
		h.nextID++
		got, moves, err := h.m.Add(e, h.now)
		if err != nil {
			h.t.Fatal(err)
		}
		h.headers[e.ID] = got
		h.ids = append(h.ids, e.ID)
		if h.ref != nil {
			want = h.ref.add(e, h.now)
		}
		h.apply("add", moves, 0)
		if got.Tier != h.tierOf(e.ID) {
			h.t.Fatalf("add: returned tier %d, moves say %d", got.Tier, h.tierOf(e.ID))
		}
	case r < 75:
		id, ok := h.randomID()
		if !ok {
			return
		}
		e := h.headers[id]
		if h.rng.IntN(3) == 0 {
			e.Sp = float64(h.rng.IntN(5)) / 4
		}
		got, moves, err := h.m.Access(e, h.now)
		if err != nil {
			h.t.Fatal(err)
		}
		if got.N != e.N+1 || !got.LastUsed.Equal(h.now) {
			h.t.Fatalf("access: got n=%d t=%v, want n=%d t=%v", got.N, got.LastUsed, e.N+1, h.now)
		}
		h.headers[id] = got
		if h.ref != nil {
			want = h.ref.access(e, h.now)
		}
		h.apply("access", moves, 0)
	case r < 85:
		id, ok := h.randomID()
		if !ok {
			return
		}
		moves := h.m.Forget(id)
		delete(h.headers, id)
		delete(h.tier, id)
		i, _ := slices.BinarySearch(h.ids, id)
		h.ids = slices.Delete(h.ids, i, i+1)
		if h.ref != nil {
			want = h.ref.forget(id)
		}
		h.apply("forget", moves, id)
		if got := h.m.Tier(id); got != 3 {
			h.t.Fatalf("forget: record %d still in tier %d", id, got)
		}
	case r < 95:
		pass := h.rng.Uint64()
		sp := func(id uint64) float64 { return float64((id*31+pass)%5) / 4 }
		moves := h.m.Rescore(h.now, sp)
		if h.ref != nil {
			want = h.ref.rescore(h.now, sp)
		}
		h.apply("rescore", moves, 0)
	default:
		h.restoreCheck()
		if h.ref != nil {
			want, _ = h.ref.assign()
		}
	}
	h.check(fmt.Sprint(h.log[len(h.log)-1], " (op ", len(h.log), ")"), want)
}

// restoreCheck rebuilds a fresh Manager from the persisted entries, in a
// shuffled order, and expects no moves; it then continues with it.
func (h *harness) restoreCheck() {
	h.t.Helper()
	entries := h.m.Entries()
	h.rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	m, err := tiers.New(&h.opts)
	if err != nil {
		h.t.Fatal(err)
	}
	moves, err := m.Restore(entries)
	if err != nil {
		h.t.Fatal(err)
	}
	if len(moves) != 0 {
		h.t.Fatalf("restore: moves %v, want none", moves)
	}
	if !reflect.DeepEqual(m.Entries(), h.m.Entries()) || !reflect.DeepEqual(m.Pivotal(), h.m.Pivotal()) {
		h.t.Fatalf("restore: state differs")
	}
	s := h.m.Stats()
	h.stats.Promotions += s.Promotions
	h.stats.Demotions += s.Demotions
	h.stats.Repartitions += s.Repartitions
	h.m = m
	h.log = append(h.log, "restore")
}

func smallOptions(rng *rand.Rand) tiers.Options {
	return tiers.Options{
		Tier1Cap:       rng.IntN(10) - 1, // -1: none, 0: default (256)
		Tier2Cap:       rng.IntN(20) - 1,
		RecentSessions: rng.IntN(4) - 1,
		PivotalK:       rng.IntN(6) - 1,
	}
}

// TestAgainstReference runs random operation sequences on small tiers and
// compares every step with the naive reference model.
func TestAgainstReference(t *testing.T) {
	seeds, steps := 40, 300
	if testing.Short() {
		seeds = 15
	}
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 1))
		o := smallOptions(rng)
		if o.Tier1Cap == 0 {
			o.Tier1Cap = 8
		}
		if o.Tier2Cap == 0 {
			o.Tier2Cap = 12
		}
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			h := newHarness(t, seed, &o, true)
			for range steps {
				h.step(1+rng.IntN(8), true)
			}
		})
	}
}

// TestLargeInvariants runs a longer sequence at larger capacities,
// checking the invariants without the (slow) reference.
func TestLargeInvariants(t *testing.T) {
	steps := 2000
	if testing.Short() {
		steps = 500
	}
	o := tiers.Options{Tier1Cap: 64, Tier2Cap: 256, PivotalK: 16}
	h := newHarness(t, 7, &o, false)
	for range steps {
		h.step(20, true)
	}
	s := h.m.Stats()
	s.Promotions += h.stats.Promotions
	s.Demotions += h.stats.Demotions
	s.Repartitions += h.stats.Repartitions
	if s.Demotions == 0 || s.Promotions == 0 || s.Repartitions == 0 {
		t.Errorf("sequence did not exercise the tiers: %+v", s)
	}
}

// TestDeterministic runs the same inputs and now sequence twice.
func TestDeterministic(t *testing.T) {
	run := func() ([]string, []tiers.Entry) {
		o := tiers.Options{Tier1Cap: 16, Tier2Cap: 40, PivotalK: 4}
		h := newHarness(t, 42, &o, false)
		for range 1500 {
			h.step(10, true)
		}
		return h.log, h.m.Entries()
	}
	log1, e1 := run()
	log2, e2 := run()
	if !reflect.DeepEqual(log1, log2) || !reflect.DeepEqual(e1, e2) {
		t.Fatal("two runs over the same inputs differ")
	}
}

// TestRecencyRule: when every session is small enough that the recent
// sessions fit tier 1, every record of the most recent sessions is in
// tier 1, whatever else happens.
func TestRecencyRule(t *testing.T) {
	for seed := range uint64(5) {
		o := tiers.Options{Tier1Cap: 24, Tier2Cap: 30, RecentSessions: 3, PivotalK: 5}
		h := newHarness(t, seed, &o, false)
		perSession := 0
		for range 600 {
			before := h.seq
			h.step(4, false)
			if h.seq != before {
				perSession = 0
			}
			if perSession++; perSession > o.Tier1Cap/o.RecentSessions {
				h.seq++ // keep sessions small: 3 sessions of at most 8
				perSession = 0
			}
			recent := map[uint64]bool{}
			var seqs []uint64
			for _, e := range h.headers {
				if !recent[e.SessionSeq] {
					recent[e.SessionSeq] = true
					seqs = append(seqs, e.SessionSeq)
				}
			}
			slices.Sort(seqs)
			seqs = seqs[max(0, len(seqs)-o.RecentSessions):]
			for id, e := range h.headers {
				if slices.Contains(seqs, e.SessionSeq) && h.m.Tier(id) != 1 {
					t.Fatalf("seed %d: record %d of recent session %d in tier %d", seed, id, e.SessionSeq, h.m.Tier(id))
				}
			}
		}
	}
}
