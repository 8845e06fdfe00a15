package tiers_test

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/tiers"
)

func newManager(t *testing.T, o *tiers.Options) *tiers.Manager {
	t.Helper()
	m, err := tiers.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// rec is a fresh record: with Sp 0, n 0 and Δt 0 its P is 0.06·I0.
func rec(id, seq uint64, i0 float64) tiers.Entry {
	return tiers.Entry{ID: id, Session: fmt.Sprint("s", seq), SessionSeq: seq, I0: i0, LastUsed: t0}
}

func mustAdd(t *testing.T, m *tiers.Manager, e tiers.Entry) []tiers.Move {
	t.Helper()
	_, moves, err := m.Add(e, t0)
	if err != nil {
		t.Fatal(err)
	}
	return moves
}

func wantMembers(t *testing.T, m *tiers.Manager, t1, t2 []uint64) {
	t.Helper()
	if got := m.Members(1); !reflect.DeepEqual(got, t1) {
		t.Errorf("tier 1 = %v, want %v", got, t1)
	}
	if got := m.Members(2); !reflect.DeepEqual(got, t2) {
		t.Errorf("tier 2 = %v, want %v", got, t2)
	}
}

func wantMoves(t *testing.T, got, want []tiers.Move) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("moves = %v, want %v", got, want)
	}
}

func TestNewOptions(t *testing.T) {
	d := tiers.DefaultParams()
	tests := []struct {
		name    string
		in      *tiers.Options
		want    tiers.Options
		wantErr bool
	}{
		{"nil", nil, tiers.Options{Tier1Cap: 256, Tier2Cap: 4096, RecentSessions: 2, PivotalK: 64, Params: d}, false},
		{"negative means none", &tiers.Options{Tier1Cap: -1, Tier2Cap: -7, RecentSessions: -1, PivotalK: -1},
			tiers.Options{Tier1Cap: -1, Tier2Cap: -1, RecentSessions: -1, PivotalK: -1, Params: d}, false},
		{"given", &tiers.Options{Tier1Cap: 8, Tier2Cap: 9, RecentSessions: 3, PivotalK: 4, Params: tiers.Params{Alpha: 1}},
			tiers.Options{Tier1Cap: 8, Tier2Cap: 9, RecentSessions: 3, PivotalK: 4, Params: tiers.Params{Alpha: 1}}, false},
		{"negative coefficient", &tiers.Options{Params: tiers.Params{Alpha: -1}}, tiers.Options{}, true},
		{"NaN coefficient", &tiers.Options{Params: tiers.Params{Lambda: math.NaN()}}, tiers.Options{}, true},
		{"infinite coefficient", &tiers.Options{Params: tiers.Params{Beta: math.Inf(1)}}, tiers.Options{}, true},
		{"caps overflow", &tiers.Options{Tier1Cap: math.MaxInt, Tier2Cap: math.MaxInt}, tiers.Options{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := tiers.New(tt.in)
			if tt.wantErr {
				if !errors.Is(err, tiers.ErrInvalidOption) {
					t.Fatalf("err = %v, want ErrInvalidOption", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Options(); got != tt.want {
				t.Errorf("Options() = %+v, want %+v", got, tt.want)
			}
			// Options round-trips through New.
			o := m.Options()
			if got := newManager(t, &o).Options(); got != tt.want {
				t.Errorf("New(Options()) = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestInvalidEntries(t *testing.T) {
	good := rec(1, 1, 5)
	tests := []struct {
		name string
		mod  func(*tiers.Entry)
	}{
		{"I0 above 10", func(e *tiers.Entry) { e.I0 = 10.5 }},
		{"I0 negative", func(e *tiers.Entry) { e.I0 = -1 }},
		{"I0 NaN", func(e *tiers.Entry) { e.I0 = math.NaN() }},
		{"Sp NaN", func(e *tiers.Entry) { e.Sp = math.NaN() }},
		{"Sp infinite", func(e *tiers.Entry) { e.Sp = math.Inf(-1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, nil)
			mustAdd(t, m, rec(9, 1, 5))
			e := good
			tt.mod(&e)
			if _, _, err := m.Add(e, t0); !errors.Is(err, tiers.ErrInvalidEntry) {
				t.Errorf("Add: err = %v, want ErrInvalidEntry", err)
			}
			if _, _, err := m.Access(e, t0); !errors.Is(err, tiers.ErrInvalidEntry) {
				t.Errorf("Access: err = %v, want ErrInvalidEntry", err)
			}
			if _, err := m.Restore([]tiers.Entry{e}); !errors.Is(err, tiers.ErrInvalidEntry) {
				t.Errorf("Restore: err = %v, want ErrInvalidEntry", err)
			}
			wantMembers(t, m, []uint64{9}, []uint64{}) // nothing changed
		})
	}
}

func TestAddRejects(t *testing.T) {
	m := newManager(t, nil)
	mustAdd(t, m, rec(1, 1, 5))
	if _, _, err := m.Add(rec(1, 1, 7), t0); !errors.Is(err, tiers.ErrDuplicate) {
		t.Errorf("duplicate: err = %v, want ErrDuplicate", err)
	}
	e := rec(2, 1, 5)
	e.LastUsed = time.Time{}
	if _, _, err := m.Add(e, t0); !errors.Is(err, tiers.ErrInvalidEntry) {
		t.Errorf("zero LastUsed: err = %v, want ErrInvalidEntry", err)
	}
	// Access sets LastUsed itself, so a zero one is fine there.
	if _, _, err := m.Access(e, t0); err != nil {
		t.Errorf("Access with zero LastUsed: %v", err)
	}
	if got, _ := m.Entry(1); got.I0 != 5 {
		t.Errorf("rejected duplicate changed the entry: %+v", got)
	}
}

func TestRestoreRejects(t *testing.T) {
	tests := []struct {
		name    string
		entries []tiers.Entry
		want    error
	}{
		{"duplicate id", []tiers.Entry{rec(1, 1, 5), rec(1, 2, 6)}, tiers.ErrDuplicate},
		{"tier 4", []tiers.Entry{{ID: 1, I0: 5, LastUsed: t0, Tier: 4}}, tiers.ErrInvalidEntry},
		{"NaN P", []tiers.Entry{{ID: 1, I0: 5, LastUsed: t0, P: math.NaN()}}, tiers.ErrInvalidEntry},
		{"negative P", []tiers.Entry{{ID: 1, I0: 5, LastUsed: t0, P: -0.1}}, tiers.ErrInvalidEntry},
		{"zero LastUsed", []tiers.Entry{{ID: 1, I0: 5}}, tiers.ErrInvalidEntry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, nil)
			mustAdd(t, m, rec(9, 1, 5))
			if _, err := m.Restore(tt.entries); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			wantMembers(t, m, []uint64{9}, []uint64{})
		})
	}
}

// TestPlacement walks the rules step by step on tiny tiers: tier 1 holds
// 4, tier 2 holds 2, one recent session, 2 pivotal records. A fresh
// record's P is 0.06·I0; ties rank the larger id first.
func TestPlacement(t *testing.T) {
	m := newManager(t, &tiers.Options{Tier1Cap: 4, Tier2Cap: 2, RecentSessions: 1, PivotalK: 2})
	mv := func(id uint64, from, to uint8) tiers.Move { return tiers.Move{ID: id, From: from, To: to} }
	access := func(id, seq uint64, i0, sp float64) (tiers.Entry, []tiers.Move) {
		e := rec(id, seq, i0)
		e.Sp = sp
		got, moves, err := m.Access(e, t0)
		if err != nil {
			t.Fatal(err)
		}
		return got, moves
	}
	steps := []struct {
		name   string
		do     func() []tiers.Move
		moves  []tiers.Move
		t1, t2 []uint64
	}{
		{"session 1 is recent: all in tier 1 whatever P",
			func() []tiers.Move {
				return append(append(mustAdd(t, m, rec(1, 1, 9)), mustAdd(t, m, rec(2, 1, 2))...), mustAdd(t, m, rec(3, 1, 5))...)
			},
			[]tiers.Move{mv(1, 3, 1), mv(2, 3, 1), mv(3, 3, 1)}, []uint64{1, 2, 3}, []uint64{}},
		{"session 2 starts: the 2 best of session 1 stay as pivotal",
			func() []tiers.Move { return mustAdd(t, m, rec(4, 2, 1)) },
			[]tiers.Move{mv(2, 1, 2), mv(4, 3, 1)}, []uint64{1, 3, 4}, []uint64{2}},
		{"2 recent + 2 pivotal fill tier 1",
			func() []tiers.Move { return mustAdd(t, m, rec(5, 2, 1)) },
			[]tiers.Move{mv(5, 3, 1)}, []uint64{1, 3, 4, 5}, []uint64{2}},
		{"recent records take pivotal slots",
			func() []tiers.Move { return mustAdd(t, m, rec(6, 2, 3)) },
			[]tiers.Move{mv(3, 1, 2), mv(6, 3, 1)}, []uint64{1, 4, 5, 6}, []uint64{2, 3}},
		{"tier 2 overflows: its lowest record goes to tier 3",
			func() []tiers.Move { return mustAdd(t, m, rec(7, 2, 2)) },
			[]tiers.Move{mv(1, 1, 2), mv(2, 2, 3), mv(7, 3, 1)}, []uint64{4, 5, 6, 7}, []uint64{1, 3}},
		{"recent sessions above the cap: the highest-P ones stay",
			func() []tiers.Move { return mustAdd(t, m, rec(8, 2, 4)) },
			[]tiers.Move{mv(4, 1, 3), mv(8, 3, 1)}, []uint64{5, 6, 7, 8}, []uint64{1, 3}},
		{"accessed tier-3 record is promoted (lazy), the weakest demoted",
			func() []tiers.Move { _, mvs := access(2, 1, 2, 1); return mvs }, // P = 0.12+0.4+0.2 ln 2
			[]tiers.Move{mv(2, 3, 2), mv(3, 2, 3)}, []uint64{5, 6, 7, 8}, []uint64{1, 2}},
		{"accessed tier-3 recent record re-enters tier 1",
			func() []tiers.Move { _, mvs := access(4, 2, 1, 0); return mvs }, // P = 0.06+0.2 ln 2
			[]tiers.Move{mv(4, 3, 1), mv(5, 1, 3)}, []uint64{4, 6, 7, 8}, []uint64{1, 2}},
		{"accessed tier-3 record that does not rank stays in tier 3",
			func() []tiers.Move {
				got, mvs := access(3, 1, 5, 0)
				if got.Tier != 3 || got.N != 1 {
					t.Errorf("entry = %+v, want tier 3, n 1", got)
				}
				return mvs
			},
			nil, []uint64{4, 6, 7, 8}, []uint64{1, 2}},
		{"forget frees a tier-1 slot for the best pivotal record",
			func() []tiers.Move { return m.Forget(8) },
			[]tiers.Move{mv(2, 2, 1)}, []uint64{2, 4, 6, 7}, []uint64{1}},
		{"rescore with new alignments re-ranks the active tiers",
			func() []tiers.Move {
				return m.Rescore(t0, func(id uint64) float64 {
					if id == 1 {
						return 1
					}
					return 0
				})
			},
			[]tiers.Move{mv(1, 2, 1), mv(2, 1, 2)}, []uint64{1, 4, 6, 7}, []uint64{2}},
	}
	for _, st := range steps {
		moves := st.do()
		if !reflect.DeepEqual(moves, st.moves) {
			t.Fatalf("%s: moves = %v, want %v", st.name, moves, st.moves)
		}
		if got := m.Members(1); !reflect.DeepEqual(got, st.t1) {
			t.Fatalf("%s: tier 1 = %v, want %v", st.name, got, st.t1)
		}
		if got := m.Members(2); !reflect.DeepEqual(got, st.t2) {
			t.Fatalf("%s: tier 2 = %v, want %v", st.name, got, st.t2)
		}
	}
	want := tiers.Stats{Tier1: 4, Tier2: 1, Adds: 8, Accesses: 3, Forgets: 1, Promotions: 12, Demotions: 8, Rescores: 1, Scored: 16, Repartitions: 2}
	if got := m.Stats(); got != want {
		t.Errorf("Stats() = %+v\n want %+v", got, want)
	}
}

func TestUnknownIDs(t *testing.T) {
	m := newManager(t, nil)
	mustAdd(t, m, rec(1, 1, 5))
	if got := m.Tier(99); got != 3 {
		t.Errorf("Tier(99) = %d, want 3", got)
	}
	if _, ok := m.Entry(99); ok {
		t.Error("Entry(99) found")
	}
	if got := m.Forget(99); got != nil {
		t.Errorf("Forget(99) = %v, want nil", got)
	}
	for _, tier := range []uint8{0, 3, 4} {
		if got := m.Members(tier); got != nil {
			t.Errorf("Members(%d) = %v, want nil", tier, got)
		}
		if got := m.Len(tier); got != 0 {
			t.Errorf("Len(%d) = %d, want 0", tier, got)
		}
	}
	if got := m.Len(1); got != 1 {
		t.Errorf("Len(1) = %d, want 1", got)
	}
}

// TestAccessActive: the caller's header is authoritative, n += 1, t_last
// = now and P is recomputed with Δt = 0.
func TestAccessActive(t *testing.T) {
	m := newManager(t, nil)
	e := rec(1, 1, 5)
	e.LastUsed = t0.Add(-10 * 24 * time.Hour)
	added, _, err := m.Add(e, t0)
	if err != nil {
		t.Fatal(err)
	}
	if want := tiers.Priority(tiers.DefaultParams(), 5, 0, 0, 10); added.P != want {
		t.Errorf("added P = %v, want %v", added.P, want)
	}
	now := t0.Add(time.Hour)
	e.N, e.Sp = 4, 0.5
	got, moves, err := m.Access(e, now)
	if err != nil {
		t.Fatal(err)
	}
	want := e
	want.N, want.LastUsed, want.Tier = 5, now, 1
	want.P = tiers.Priority(tiers.DefaultParams(), 5, 0.5, 5, 0)
	if got != want {
		t.Errorf("Access = %+v\n want %+v", got, want)
	}
	if len(moves) != 0 {
		t.Errorf("moves = %v, want none", moves)
	}
	if stored, _ := m.Entry(1); stored != want {
		t.Errorf("Entry(1) = %+v, want %+v", stored, want)
	}
}

// TestRescoreDecay: a decay-only pass (nil callback) keeps S_p and lowers
// every P by the elapsed time.
func TestRescoreDecay(t *testing.T) {
	m := newManager(t, nil)
	e := rec(1, 1, 8)
	e.Sp = 0.5
	mustAdd(t, m, e)
	m.Rescore(t0.Add(20*24*time.Hour), nil)
	got, _ := m.Entry(1)
	if want := tiers.Priority(tiers.DefaultParams(), 8, 0.5, 0, 20); got.P != want || got.Sp != 0.5 {
		t.Errorf("after rescore: P = %v, Sp = %v; want %v, 0.5", got.P, got.Sp, want)
	}
}

// TestRestoreChangedOptions: restoring under smaller capacities reports
// the demotions relative to the persisted tiers.
func TestRestoreChangedOptions(t *testing.T) {
	big := newManager(t, &tiers.Options{Tier1Cap: 4, Tier2Cap: 4, RecentSessions: 1, PivotalK: 2})
	for id := uint64(1); id <= 6; id++ {
		mustAdd(t, big, rec(id, 1, float64(id)))
	}
	wantMembers(t, big, []uint64{3, 4, 5, 6}, []uint64{1, 2})
	small := newManager(t, &tiers.Options{Tier1Cap: 2, Tier2Cap: 1, RecentSessions: 1, PivotalK: 2})
	moves, err := small.Restore(big.Entries())
	if err != nil {
		t.Fatal(err)
	}
	wantMoves(t, moves, []tiers.Move{{1, 2, 3}, {2, 2, 3}, {3, 1, 3}, {4, 1, 2}})
	wantMembers(t, small, []uint64{5, 6}, []uint64{4})
	// Tier 0 counts as 3: a persisted record without a tier competes.
	extra := rec(7, 1, 10)
	extra.P = 0.6
	moves, err = small.Restore(append(small.Entries(), extra))
	if err != nil {
		t.Fatal(err)
	}
	wantMoves(t, moves, []tiers.Move{{4, 2, 3}, {5, 1, 2}, {7, 3, 1}})
}

// TestNoTiers: with both tiers switched off every record goes straight
// to tier 3 and nothing is lost from the caller's view.
func TestNoTiers(t *testing.T) {
	m := newManager(t, &tiers.Options{Tier1Cap: -1, Tier2Cap: -1})
	got, moves, err := m.Add(rec(1, 1, 10), t0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tier != 3 || len(moves) != 0 || m.Len(1)+m.Len(2) != 0 {
		t.Errorf("entry %+v, moves %v, sizes %d/%d; want tier 3, none", got, moves, m.Len(1), m.Len(2))
	}
}

// TestConcurrentUse exercises the lock under the race detector.
func TestConcurrentUse(t *testing.T) {
	m := newManager(t, &tiers.Options{Tier1Cap: 8, Tier2Cap: 16})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				id := uint64(g*1000 + i + 1)
				if _, _, err := m.Add(rec(id, uint64(i/20+1), float64(i%10)), t0); err != nil {
					t.Error(err)
					return
				}
				if _, _, err := m.Access(rec(id, uint64(i/20+1), 5), t0); err != nil {
					t.Error(err)
					return
				}
				_ = m.Members(1)
				_ = m.Stats()
				if i%50 == 0 {
					m.Rescore(t0, nil)
				}
			}
		})
	}
	wg.Wait()
	if l1, l2 := m.Len(1), m.Len(2); l1 > 8 || l2 > 16 || l1+l2 != len(m.Entries()) {
		t.Errorf("sizes %d, %d, entries %d", l1, l2, len(m.Entries()))
	}
}
