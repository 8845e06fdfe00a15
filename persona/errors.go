package persona

import "errors"

// Sentinel errors. Callers match them with errors.Is. Every method that
// returns one of them has changed nothing.
var (
	// ErrInvalidOption is returned by New for an option out of range.
	ErrInvalidOption = errors.New("persona: invalid option")
	// ErrDims is returned for a vector whose length differs from the
	// persona's dimension (or is 0 or above MaxDims).
	ErrDims = errors.New("persona: wrong vector dimensions")
	// ErrInvalidVector is returned for a vector with a NaN or infinite
	// component, or of length zero.
	ErrInvalidVector = errors.New("persona: invalid vector")
	// ErrInvalidImportance is returned for an importance outside [0, 10].
	ErrInvalidImportance = errors.New("persona: importance outside [0, 10]")
	// ErrInvalidText is returned for text that is not valid UTF-8.
	ErrInvalidText = errors.New("persona: text is not valid UTF-8")
	// ErrCorrupt is returned by UnmarshalBinary for input that is not a
	// persona encoded by MarshalBinary (bad magic, checksum, lengths or
	// values).
	ErrCorrupt = errors.New("persona: corrupt encoding")
	// ErrVersion is returned by UnmarshalBinary for an encoding version
	// this package does not read.
	ErrVersion = errors.New("persona: unsupported encoding version")
)
