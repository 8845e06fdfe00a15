//go:build ollama

// Package ollama_test runs hmo against a real Ollama server on 127.0.0.1
// serving a tiny random-weight llama model. Run it with 'make
// test-ollama', which builds the server (scripts/ollama-build.sh) and sets
// HMO_OLLAMA_BIN.
package ollama_test
