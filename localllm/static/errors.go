package static

import "errors"

// Errors of the static embedder.
var (
	// ErrTable reports a word-vector table that does not decode.
	ErrTable = errors.New("static: bad word-vector table")
	// ErrState reports corpus statistics that do not decode or belong
	// to another table.
	ErrState = errors.New("static: bad corpus state")
	// ErrOptions reports an invalid Options field.
	ErrOptions = errors.New("static: invalid static embedder option")
)
