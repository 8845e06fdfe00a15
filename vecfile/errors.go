package vecfile

import "errors"

// Errors returned by the package.
var (
	ErrClosed       = errors.New("vecfile: index is closed")
	ErrCorrupt      = errors.New("vecfile: index files are damaged")
	ErrIncompatible = errors.New("vecfile: index was built with other options")
	ErrDimension    = errors.New("vecfile: wrong vector dimension")
	ErrNotFinite    = errors.New("vecfile: vector has a NaN or infinite component")
	ErrZeroVector   = errors.New("vecfile: zero vector")
	ErrInvalidK     = errors.New("vecfile: k must be positive")
	ErrOptions      = errors.New("vecfile: invalid options")
	ErrReadOnly     = errors.New("vecfile: index is open read-only")
)
