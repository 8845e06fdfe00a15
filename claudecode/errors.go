package claudecode

import "errors"

// Sentinel errors.
var (
	ErrSyntax   = errors.New("claudecode: malformed line")
	ErrLineSize = errors.New("claudecode: line too long")
)
