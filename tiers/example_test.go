package tiers_test

import (
	"fmt"
	"log"
	"time"

	"github.com/hmo-dev/hmo/tiers"
)

func Example() {
	// Tiny tiers so the example shows every rule: tier 1 holds 3 records
	// (1 recent session + up to 1 pivotal), tier 2 holds 2.
	m, err := tiers.New(&tiers.Options{Tier1Cap: 3, Tier2Cap: 2, RecentSessions: 1, PivotalK: 1})
	if err != nil {
		log.Fatal(err)
	}
	day := time.Date(2023, 5, 8, 12, 0, 0, 0, time.UTC)

	// The engine numbers sessions as it first sees them (SessionSeq) and
	// persists every returned move in the same transaction as the record.
	add := func(id, seq uint64, i0 float64, at time.Time) {
		e, moves, err := m.Add(tiers.Entry{ID: id, Session: fmt.Sprint("s", seq), SessionSeq: seq, I0: i0, LastUsed: at}, at)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("add %d: P=%.3f tier %d, moves %v\n", id, e.P, e.Tier, moves)
	}
	add(1, 1, 9, day) // "I am allergic to peanuts"
	add(2, 1, 2, day) // "ok, thanks"
	add(3, 1, 4, day)
	next := day.AddDate(0, 0, 7)
	add(4, 2, 5, next) // a new session: session 1 competes by P
	add(5, 2, 5, next)
	add(6, 2, 5, next)

	// Recall returned record 2, now in tier 3: it is scored and ranked
	// against the active tiers (lazy update).
	e, moves, err := m.Access(tiers.Entry{ID: 2, Session: "s1", SessionSeq: 1, I0: 2, Sp: 0.9}, next)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("access 2: n=%d P=%.3f tier %d, moves %v\n", e.N, e.P, e.Tier, moves)

	fmt.Println("tier 1:", m.Members(1), "tier 2:", m.Members(2), "record 3 in tier", m.Tier(3))

	// The persona drift gate fired a day later: re-score tiers 1 and 2
	// only, with the new alignments and the decay since t_last.
	moves = m.Rescore(next.AddDate(0, 0, 1), func(id uint64) float64 { return 0.1 })
	r1, _ := m.Entry(1)
	fmt.Printf("rescore: moves %v, record 1 P=%.3f\n", moves, r1.P)
	// Output:
	// add 1: P=0.540 tier 1, moves [{1 3 1}]
	// add 2: P=0.120 tier 1, moves [{2 3 1}]
	// add 3: P=0.240 tier 1, moves [{3 3 1}]
	// add 4: P=0.300 tier 1, moves [{2 1 2} {3 1 2} {4 3 1}]
	// add 5: P=0.300 tier 1, moves [{5 3 1}]
	// add 6: P=0.300 tier 1, moves [{1 1 2} {2 2 3} {6 3 1}]
	// access 2: n=1 P=0.619 tier 2, moves [{2 3 2} {3 2 3}]
	// tier 1: [4 5 6] tier 2: [1 2] record 3 in tier 3
	// rescore: moves [], record 1 P=0.389
}
