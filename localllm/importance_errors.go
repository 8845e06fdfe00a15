package localllm

import "errors"

// ErrHeuristicOptions reports an invalid HeuristicOptions field.
var ErrHeuristicOptions = errors.New("localllm: invalid heuristic scorer option")
