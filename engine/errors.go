package engine

import "errors"

// Sentinel errors. Callers match them with errors.Is.
var (
	ErrNotFound         = errors.New("hmo: not found")
	ErrClosed           = errors.New("hmo: store closed")
	ErrLocked           = errors.New("hmo: store is in use by another process")
	ErrEmptyText        = errors.New("hmo: empty text")
	ErrInvalidUTF8      = errors.New("hmo: text is not valid UTF-8")
	ErrTooLarge         = errors.New("hmo: record too large")
	ErrEmbedderMismatch = errors.New("hmo: store was built with another embedder")
	ErrConfigMismatch   = errors.New("hmo: store was built with other index settings")
	ErrSchema           = errors.New("hmo: unsupported store schema version")
	ErrDims             = errors.New("hmo: wrong vector dimensions")
	ErrInvalidQuery     = errors.New("hmo: invalid query")
	ErrInvalidOption    = errors.New("hmo: invalid option")
	ErrCorrupt          = errors.New("hmo: corrupt record")
	ErrInvalidInput     = errors.New("hmo: invalid input")
	ErrSuperseded       = errors.New("hmo: record was superseded by a newer version")
	ErrKeyReused        = errors.New("hmo: idempotency key was used for another write")
	// ErrDamaged means the store file cannot be read as a store (bbolt
	// found damaged pages); the message says what to do.
	ErrDamaged = errors.New("hmo: store file is damaged")
	// ErrNoStore means Open was asked not to create a store and dir
	// holds none.
	ErrNoStore = errors.New("hmo: no store")
	// ErrReadOnly means a write was asked of a store opened read-only.
	ErrReadOnly = errors.New("hmo: store opened read-only")
	// ErrNeedsWrite means a read-only open found a store of an older
	// layout that must be opened for writing once.
	ErrNeedsWrite = errors.New("hmo: store must be opened for writing once")

	// Language-model failures. Enricher and Sufficiency implementations
	// wrap them so the engine can count why it fell back.
	ErrModelUnavailable = errors.New("hmo: language model server unavailable")
	ErrModelNotFound    = errors.New("hmo: language model not found")
	ErrModelOutput      = errors.New("hmo: invalid language model output")
)
