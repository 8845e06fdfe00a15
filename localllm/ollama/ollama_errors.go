package ollama

import "errors"

// ErrOllamaOptions reports an invalid Ollama client, embedder or step option.
var ErrOllamaOptions = errors.New("ollama: invalid ollama option")
