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

	// Language-model failures. Enricher and Sufficiency implementations
	// wrap them so the engine can count why it fell back.
	ErrModelUnavailable = errors.New("hmo: language model server unavailable")
	ErrModelNotFound    = errors.New("hmo: language model not found")
	ErrModelOutput      = errors.New("hmo: invalid language model output")
)
