// Package eval measures hmo's retrieval on public benchmarks without an
// LLM: LoCoMo and LongMemEval turn- and session-level recall, session
// NDCG, per question category, with query latency, and compares two runs
// question by question with a paired bootstrap. It sits above engine and
// opens stores through a caller's Opener, so it never wires adapters
// itself.
package eval
