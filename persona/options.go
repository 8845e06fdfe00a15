package persona

import "fmt"

// Defaults for Options.
const (
	// DefaultRate is the default learning rate η of the moving average:
	// a record of importance I0 moves p by η·I0/10. At the average
	// importance 5 the persona's memory is about 1/(η/2) = 40 records.
	DefaultRate = 0.05
	// DefaultDelta is the default drift threshold δ of the gate (Eq. 6).
	DefaultDelta = 0.05
	// DefaultMaxTerms is the default number of salient terms in Profile.
	DefaultMaxTerms = 32
	// DefaultTermCapacity is the default number of distinct terms tracked
	// (the profile's working set); the lowest-weighted are dropped beyond.
	DefaultTermCapacity = 1024
	// DefaultMaxStatements is the default number of statements in Profile.
	DefaultMaxStatements = 8
	// DefaultStatementMin is the default importance, on [0, 10], at or
	// above which a record's text can become a profile statement.
	DefaultStatementMin = 7.0
	// DefaultMaxStatementBytes is the default length limit of a
	// statement, in bytes; longer text is cut at a word boundary.
	DefaultMaxStatementBytes = 240
	// DefaultMaxHistory is the default number of gate-firing snapshots
	// kept (the oldest are dropped).
	DefaultMaxHistory = 64
	// DefaultHistoryTerms is the default number of top terms stored in
	// each snapshot.
	DefaultHistoryTerms = 5
)

// Fixed limits.
const (
	// MaxDims is the largest vector dimension accepted.
	MaxDims = 1 << 16
	// MinTermRunes and MaxTermRunes bound the length of a profile term in
	// characters; shorter and longer tokens are skipped.
	MinTermRunes = 3
	MaxTermRunes = 32
)

// Options configure a Persona. A nil *Options means all defaults; a zero
// field takes its default. For the counts MaxTerms, MaxStatements,
// MaxHistory and HistoryTerms a negative value means none.
type Options struct {
	// Dims is the vector dimension. Default 0: set by the first Observe
	// (or UnmarshalBinary) and fixed from then on.
	Dims int
	// Rate is the learning rate η in (0, 1]. Default DefaultRate.
	Rate float64
	// Delta is the drift threshold δ in (0, 2]: the gate fires when
	// 1 − cos(p, anchor) > Delta. Default DefaultDelta.
	Delta float64
	// GateOff makes every update fire (the ablation "re-score on every
	// persona change"). Default false.
	GateOff bool
	// MaxTerms is the number of salient terms Profile returns. Default
	// DefaultMaxTerms.
	MaxTerms int
	// TermCapacity is the number of distinct terms tracked, at least
	// MaxTerms and HistoryTerms. Default DefaultTermCapacity (raised to
	// MaxTerms or HistoryTerms if lower).
	TermCapacity int
	// MaxStatements is the number of statements Profile returns. Default
	// DefaultMaxStatements.
	MaxStatements int
	// StatementMin is the importance in (0, 10] at or above which a
	// record's text can become a statement. Default DefaultStatementMin.
	StatementMin float64
	// MaxStatementBytes is the length limit of a statement in bytes,
	// 16 to 65535. Default DefaultMaxStatementBytes.
	MaxStatementBytes int
	// MaxHistory is the number of gate-firing snapshots kept. Default
	// DefaultMaxHistory.
	MaxHistory int
	// HistoryTerms is the number of top terms in each snapshot, at most
	// 255. Default DefaultHistoryTerms.
	HistoryTerms int
}

// limits are the resolved counts: none is 0.
type limits struct {
	terms, statements, history, historyTerms int
}

// withDefaults returns a copy of o with defaults filled in (a negative
// count normalised to -1, so the copy can be given to New again) and the
// resolved counts, or an error wrapping ErrInvalidOption.
func (o *Options) withDefaults() (Options, limits, error) {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.Delta == 0 {
		c.Delta = DefaultDelta
	}
	if c.StatementMin == 0 {
		c.StatementMin = DefaultStatementMin
	}
	if c.MaxStatementBytes == 0 {
		c.MaxStatementBytes = DefaultMaxStatementBytes
	}
	var l limits
	c.MaxTerms, l.terms = count(c.MaxTerms, DefaultMaxTerms)
	c.MaxStatements, l.statements = count(c.MaxStatements, DefaultMaxStatements)
	c.MaxHistory, l.history = count(c.MaxHistory, DefaultMaxHistory)
	c.HistoryTerms, l.historyTerms = count(c.HistoryTerms, DefaultHistoryTerms)
	if c.TermCapacity == 0 {
		c.TermCapacity = max(DefaultTermCapacity, l.terms, l.historyTerms)
	}
	switch {
	case c.Dims < 0 || c.Dims > MaxDims:
		return c, l, fmt.Errorf("%w: Dims = %d, want 0 to %d", ErrInvalidOption, c.Dims, MaxDims)
	case !(c.Rate > 0 && c.Rate <= 1):
		return c, l, fmt.Errorf("%w: Rate = %v, want (0, 1]", ErrInvalidOption, c.Rate)
	case !(c.Delta > 0 && c.Delta <= 2):
		return c, l, fmt.Errorf("%w: Delta = %v, want (0, 2]", ErrInvalidOption, c.Delta)
	case c.TermCapacity < max(l.terms, l.historyTerms, 1):
		return c, l, fmt.Errorf("%w: TermCapacity %d below 1, MaxTerms or HistoryTerms", ErrInvalidOption, c.TermCapacity)
	case !(c.StatementMin > 0 && c.StatementMin <= 10):
		return c, l, fmt.Errorf("%w: StatementMin = %v, want (0, 10]", ErrInvalidOption, c.StatementMin)
	case c.MaxStatementBytes < 16 || c.MaxStatementBytes > 1<<16-1:
		return c, l, fmt.Errorf("%w: MaxStatementBytes = %d, want 16 to 65535", ErrInvalidOption, c.MaxStatementBytes)
	case l.historyTerms > 255:
		return c, l, fmt.Errorf("%w: HistoryTerms = %d, want at most 255", ErrInvalidOption, l.historyTerms)
	}
	return c, l, nil
}

// count resolves a count option: 0 is the default, negative is none. It
// returns the option as Persona.Options reports it and the limit.
func count(v, def int) (opt, limit int) {
	switch {
	case v == 0:
		return def, def
	case v < 0:
		return -1, 0
	}
	return v, v
}
