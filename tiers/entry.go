package tiers

import (
	"fmt"
	"math"
	"time"
)

// Tier numbers, as in engine.Header.Tier. Every record is in the archive;
// tiers 1 and 2 are views over it, so "tier 3" means "in neither".
const (
	Tier1 uint8 = 1 // the RAM cache
	Tier2 uint8 = 2 // the buffer
	Tier3 uint8 = 3 // the archive only
)

// Entry is what the Manager knows of one record: the HMO header plus the
// session it belongs to and its persona alignment.
type Entry struct {
	// ID is the record id.
	ID uint64
	// Session is the record's session key. The Manager carries it for the
	// caller and never interprets it; recency is by SessionSeq.
	Session string
	// SessionSeq is the session's ordinal: the caller gives every session
	// a number when it first sees it, increasing, so a larger SessionSeq
	// is a more recent session. Records of one session share it.
	SessionSeq uint64
	// I0 is the initial importance on [0, 10] (the engine uses [1, 10]).
	I0 float64
	// N is the recall count.
	N uint32
	// LastUsed is t_last: the event time at ingestion, then the time of
	// the last access.
	LastUsed time.Time
	// Sp is the persona alignment S_p = max(0, cos(e, p)); values are
	// clamped to [0, 1] on input.
	Sp float64
	// P is the priority (Eq. 5) as last computed. The Manager computes it;
	// it is read as input only by Restore.
	P float64
	// Tier is the record's tier (1, 2 or 3). The Manager sets it; it is
	// read as input only by Restore, as the persisted tier (0 means 3).
	Tier uint8
}

// Move is one membership change: record ID went from tier From to tier To
// (each 1, 2 or 3). A record added or accessed from the archive comes
// from tier 3; a record dropped from tier 2 goes to tier 3.
type Move struct {
	ID       uint64
	From, To uint8
}

// check validates the fields the Manager reads from the caller. needTime
// requires a LastUsed (Add and Restore; Access sets it to now).
func (e *Entry) check(needTime bool) error {
	if math.IsNaN(e.I0) || e.I0 < 0 || e.I0 > 10 {
		return fmt.Errorf("%w: id %d: I0 = %v, want [0, 10]", ErrInvalidEntry, e.ID, e.I0)
	}
	if math.IsNaN(e.Sp) || math.IsInf(e.Sp, 0) {
		return fmt.Errorf("%w: id %d: Sp = %v", ErrInvalidEntry, e.ID, e.Sp)
	}
	if needTime && e.LastUsed.IsZero() {
		return fmt.Errorf("%w: id %d: zero LastUsed", ErrInvalidEntry, e.ID)
	}
	return nil
}

// checkRestore also validates the persisted P and Tier.
func (e *Entry) checkRestore() error {
	if err := e.check(true); err != nil {
		return err
	}
	if math.IsNaN(e.P) || math.IsInf(e.P, 0) || e.P < 0 {
		return fmt.Errorf("%w: id %d: P = %v", ErrInvalidEntry, e.ID, e.P)
	}
	if e.Tier > Tier3 {
		return fmt.Errorf("%w: id %d: tier %d", ErrInvalidEntry, e.ID, e.Tier)
	}
	return nil
}

// Stats are counters since New. Tier1 and Tier2 are the current sizes.
type Stats struct {
	Tier1, Tier2 int    // current number of records in tiers 1 and 2
	Adds         uint64 // successful Add calls
	Accesses     uint64 // successful Access calls
	Forgets      uint64 // Forget calls that removed an active record
	Promotions   uint64 // moves to a lower tier number (3→2, 3→1, 2→1)
	Demotions    uint64 // moves to a higher tier number (1→2, 1→3, 2→3)
	Rescores     uint64 // Rescore passes over tiers 1 and 2
	Scored       uint64 // priority computations (Add, Access, Rescore)
	Repartitions uint64 // recent-session window changes (an O(A) merge each)
}
