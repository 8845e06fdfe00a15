package localllm

import "errors"

// ErrOllamaOptions reports an invalid Ollama client, embedder or step option.
var ErrOllamaOptions = errors.New("localllm: invalid ollama option")
