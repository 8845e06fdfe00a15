package static

import "errors"

// Errors of the static embedder.
var (
	// ErrStaticTable reports a word-vector table that does not decode.
	ErrStaticTable = errors.New("static: bad word-vector table")
	// ErrStaticState reports corpus statistics that do not decode or belong
	// to another table.
	ErrStaticState = errors.New("static: bad corpus state")
	// ErrStaticOptions reports an invalid StaticOptions field.
	ErrStaticOptions = errors.New("static: invalid static embedder option")
)
