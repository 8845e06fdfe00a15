package tiers_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/tiers"
)

// benchState is a Manager at the default capacities (256, 4096) filled
// with 8192 records in sessions of 20, and the headers of all of them.
type benchState struct {
	m       *tiers.Manager
	rng     *rand.Rand
	headers []tiers.Entry // index id-1
	now     time.Time
	seq     uint64
}

func newBenchState(b *testing.B) *benchState {
	b.Helper()
	m, err := tiers.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	s := &benchState{m: m, rng: rand.New(rand.NewPCG(1, 2)), now: t0, seq: 1}
	for range 8192 {
		s.add(b, 20)
	}
	return s
}

func (s *benchState) add(b *testing.B, sessionLen int) {
	id := uint64(len(s.headers) + 1)
	if id%uint64(sessionLen) == 0 {
		s.seq++
	}
	s.now = s.now.Add(time.Minute)
	e := tiers.Entry{ID: id, SessionSeq: s.seq, I0: float64(1 + s.rng.IntN(10)), Sp: s.rng.Float64(), LastUsed: s.now}
	got, _, err := s.m.Add(e, s.now)
	if err != nil {
		b.Fatal(err)
	}
	s.headers = append(s.headers, got)
}

func BenchmarkAdd(b *testing.B) {
	for _, bc := range []struct {
		name       string
		sessionLen int
	}{{"session=20", 20}, {"session=1000", 1000}} {
		b.Run(bc.name, func(b *testing.B) {
			s := newBenchState(b)
			for b.Loop() {
				s.add(b, bc.sessionLen)
			}
			b.ReportMetric(float64(s.m.Len(1)), "tier1")
			b.ReportMetric(float64(s.m.Len(2)), "tier2")
		})
	}
}

func BenchmarkAccess(b *testing.B) {
	for _, bc := range []struct {
		name   string
		active bool
	}{{"active", true}, {"archive", false}} {
		b.Run(bc.name, func(b *testing.B) {
			s := newBenchState(b)
			var ids []uint64
			for _, e := range s.headers {
				if (s.m.Tier(e.ID) != 3) == bc.active {
					ids = append(ids, e.ID)
				}
			}
			for b.Loop() {
				id := ids[s.rng.IntN(len(ids))]
				e := s.headers[id-1]
				if bc.active {
					e, _ = s.m.Entry(id)
				}
				got, _, err := s.m.Access(e, s.now)
				if err != nil {
					b.Fatal(err)
				}
				s.headers[id-1] = got
			}
		})
	}
}

func BenchmarkRescore(b *testing.B) {
	s := newBenchState(b)
	sp := func(id uint64) float64 { return float64(id%97) / 97 }
	for b.Loop() {
		s.now = s.now.Add(time.Hour)
		s.m.Rescore(s.now, sp)
	}
	b.ReportMetric(float64(s.m.Len(1)+s.m.Len(2)), "active")
}

func BenchmarkRestore(b *testing.B) {
	s := newBenchState(b)
	entries := s.m.Entries()
	m, _ := tiers.New(nil)
	for b.Loop() {
		if _, err := m.Restore(entries); err != nil {
			b.Fatal(err)
		}
	}
}
