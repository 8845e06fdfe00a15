// Package eval measures hmo's retrieval on public benchmarks without an
// LLM: LoCoMo turn- and session-level recall, per question category, with
// query latency. It sits above engine and opens stores through a caller's
// Opener, so it never wires adapters itself.
package eval
