package tiers

import "fmt"

// Defaults for Options. Capacities count records.
const (
	// DefaultTier1Cap is the default capacity of tier 1 (the RAM cache).
	DefaultTier1Cap = 256
	// DefaultTier2Cap is the default capacity of tier 2 (the buffer).
	DefaultTier2Cap = 4096
	// DefaultRecentSessions is the default number of most recent sessions
	// whose records are kept in tier 1.
	DefaultRecentSessions = 2
	// DefaultPivotalK is the default number of pivotal records (the
	// highest-priority records of older sessions) kept in tier 1.
	DefaultPivotalK = 64
)

// Options configure a Manager. A nil *Options means all defaults; a zero
// field takes its default; a negative count means none (0), for ablations
// such as "no tier 1".
type Options struct {
	// Tier1Cap is the most records tier 1 holds. Default DefaultTier1Cap.
	Tier1Cap int
	// Tier2Cap is the most records tier 2 holds. Default DefaultTier2Cap.
	Tier2Cap int
	// RecentSessions is how many of the most recent sessions (by session
	// ordinal, among the active records) are kept in tier 1. Default
	// DefaultRecentSessions.
	RecentSessions int
	// PivotalK is how many of the highest-priority records outside the
	// recent sessions are kept in tier 1, space permitting. Default
	// DefaultPivotalK.
	PivotalK int
	// Params are the coefficients of Eq. 5. The zero value means
	// DefaultParams(); a non-zero value is used as given.
	Params Params
}

// limits are the resolved counts: none is 0.
type limits struct {
	tier1, tier2, recent, pivotal int
}

// withDefaults returns a copy of o with defaults filled in (a negative
// count normalised to -1) and the resolved limits, or an error wrapping
// ErrInvalidOption.
func (o *Options) withDefaults() (Options, limits, error) {
	var c Options
	if o != nil {
		c = *o
	}
	var l limits
	c.Tier1Cap, l.tier1 = count(c.Tier1Cap, DefaultTier1Cap)
	c.Tier2Cap, l.tier2 = count(c.Tier2Cap, DefaultTier2Cap)
	c.RecentSessions, l.recent = count(c.RecentSessions, DefaultRecentSessions)
	c.PivotalK, l.pivotal = count(c.PivotalK, DefaultPivotalK)
	if c.Params == (Params{}) {
		c.Params = DefaultParams()
	}
	if err := c.Params.validate(); err != nil {
		return c, l, err
	}
	if l.tier1+l.tier2 < 0 { // overflow
		return c, l, fmt.Errorf("%w: Tier1Cap + Tier2Cap overflows", ErrInvalidOption)
	}
	return c, l, nil
}

// count resolves a count option: 0 is the default, negative is none. It
// returns the option as reported by Manager.Options and the limit.
func count(v, def int) (opt, limit int) {
	switch {
	case v == 0:
		return def, def
	case v < 0:
		return -1, 0
	}
	return v, v
}
