package ollama

import "errors"

// ErrOptions reports an invalid Ollama client, embedder or step option.
var ErrOptions = errors.New("ollama: invalid ollama option")
