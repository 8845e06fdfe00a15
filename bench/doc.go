// Package bench holds hmo's benchmarks over seeded synthetic stores
// (package synth). The figures are recorded in BENCHMARKS.md; run them
// with `make bench`.
package bench
