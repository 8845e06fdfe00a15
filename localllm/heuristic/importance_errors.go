package heuristic

import "errors"

// ErrHeuristicOptions reports an invalid HeuristicOptions field.
var ErrHeuristicOptions = errors.New("heuristic: invalid heuristic scorer option")
