package tiers

import "errors"

// Sentinel errors. Callers match them with errors.Is.
var (
	// ErrInvalidOption is returned by New for an option out of range.
	ErrInvalidOption = errors.New("tiers: invalid option")
	// ErrInvalidEntry is returned for an entry with a field out of range
	// (I0 outside [0, 10], a NaN or infinite score, a zero time, an
	// unknown tier). Nothing is changed.
	ErrInvalidEntry = errors.New("tiers: invalid entry")
	// ErrDuplicate is returned by Add for an id already in tier 1 or 2,
	// and by Restore for an id given twice. Nothing is changed.
	ErrDuplicate = errors.New("tiers: duplicate id")
)
