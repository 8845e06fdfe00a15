// Package heuristic holds hmo's language-model-free text scorers, the
// defaults that need no network: Heuristic, the importance scorer that
// gives a memory record its initial importance I0 along the rubric of the
// HMO paper's Appendix A (a small linear model over feature groups, see
// Heuristic and Feature), and Summarize, the extractive summary that
// stands in for a compressed representation (HMO Eq. 2) when no language
// model is configured. Both are deterministic and safe for concurrent use.
//
// The static embedder is in package static, the Ollama client in package
// ollama.
package heuristic
