package api

import (
	"errors"

	"github.com/hmo-dev/hmo/engine"
)

// Sentinel errors of the API layer. Engine errors pass through unchanged.
var (
	ErrInvalid     = errors.New("hmo: invalid request")
	ErrTooLarge    = errors.New("hmo: request too large")
	ErrBadCursor   = errors.New("hmo: invalid or stale cursor")
	ErrUnavailable = errors.New("hmo: memory service unavailable")
)

// Error codes on the wire (the HTTP API's "code" field).
const (
	CodeInvalid      = "invalid"
	CodeNotFound     = "not_found"
	CodeTooLarge     = "too_large"
	CodeConflict     = "conflict" // e.g. updating a superseded version, an idempotency key reused
	CodeUnauthorized = "unauthorized"
	CodeUnavailable  = "unavailable"
	CodeInternal     = "internal"
)

// Error is an error as it crosses the wire: a code and a message. It
// matches the sentinel of its code with errors.Is, so callers handle a
// remote error like a local one.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"error"`
}

func (e *Error) Error() string { return e.Message }

// Is maps the code to its sentinel error.
func (e *Error) Is(target error) bool {
	switch e.Code {
	case CodeInvalid:
		return target == ErrInvalid
	case CodeNotFound:
		return target == engine.ErrNotFound
	case CodeTooLarge:
		return target == ErrTooLarge || target == engine.ErrTooLarge
	case CodeConflict:
		return target == engine.ErrSuperseded || target == engine.ErrKeyReused
	case CodeUnavailable:
		return target == ErrUnavailable
	}
	return false
}

// Code classifies err for the wire.
func Code(err error) string {
	var ae *Error
	switch {
	case errors.As(err, &ae):
		return ae.Code
	case errors.Is(err, engine.ErrNotFound):
		return CodeNotFound
	case errors.Is(err, engine.ErrTooLarge), errors.Is(err, ErrTooLarge):
		return CodeTooLarge
	case errors.Is(err, engine.ErrSuperseded), errors.Is(err, engine.ErrKeyReused):
		return CodeConflict
	case errors.Is(err, ErrInvalid), errors.Is(err, ErrBadCursor), errors.Is(err, engine.ErrInvalidQuery),
		errors.Is(err, engine.ErrInvalidInput), errors.Is(err, engine.ErrEmptyText), errors.Is(err, engine.ErrInvalidUTF8):
		return CodeInvalid
	case errors.Is(err, engine.ErrClosed), errors.Is(err, engine.ErrLocked), errors.Is(err, ErrUnavailable):
		return CodeUnavailable
	}
	return CodeInternal
}
