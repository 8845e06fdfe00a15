// Package ollama is hmo's client of a local Ollama server and the parts
// built on it: Ollama, the HTTP client (per-call timeouts, bounded retries
// with backoff, a circuit breaker); Embedder, an engine.Embedder
// served by an embedding model; Steps, the LLM steps of the engine
// (importance, compression, profile, fact extraction); and Reflective, the
// self-reflective sufficiency check of retrieval. The steps ask for JSON
// constrained by a schema and validate every answer; an answer that fails
// validation is an error wrapping engine.ErrModelOutput, and the engine
// then uses its embedded default.
//
// The static embedder is in package static, the heuristic scorers in
// package heuristic.
package ollama
