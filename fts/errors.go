package fts

import "errors"

// Sentinel errors. Callers match them with errors.Is.
var (
	// ErrCorrupt means the index directory cannot be opened or read as an
	// index of this package. The index is derived data: remove the
	// directory and rebuild it from the source of truth.
	ErrCorrupt = errors.New("fts: index corrupt or unreadable")
	// ErrIncompatible means the index was built with other settings (for
	// example another analyzer). Rebuild it, as for ErrCorrupt.
	ErrIncompatible = errors.New("fts: index built with other settings")
	// ErrLocked means another process holds the index open.
	ErrLocked = errors.New("fts: index in use by another process")
	// ErrClosed is returned by operations on a closed Index.
	ErrClosed = errors.New("fts: index closed")
	// ErrReadOnly is returned by Apply on an index opened read-only.
	ErrReadOnly = errors.New("fts: index opened read-only")
	// ErrInvalidOption is returned by Open for an option out of range,
	// and by SearchPool for a negative postings budget.
	ErrInvalidOption = errors.New("fts: invalid option")
	// ErrInvalidK is returned by Search for k <= 0.
	ErrInvalidK = errors.New("fts: k must be positive")
)
