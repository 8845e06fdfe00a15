package heuristic

import "errors"

// ErrOptions reports an invalid Options field.
var ErrOptions = errors.New("heuristic: invalid heuristic scorer option")
