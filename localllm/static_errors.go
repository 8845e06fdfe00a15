package localllm

import "errors"

// Errors of the static embedder.
var (
	// ErrStaticTable reports a word-vector table that does not decode.
	ErrStaticTable = errors.New("localllm: bad word-vector table")
	// ErrStaticState reports corpus statistics that do not decode or belong
	// to another table.
	ErrStaticState = errors.New("localllm: bad corpus state")
	// ErrStaticOptions reports an invalid StaticOptions field.
	ErrStaticOptions = errors.New("localllm: invalid static embedder option")
)
