//go:build !race

package hnsw_test

// raceEnabled reports a -race build, under which slow tests are skipped.
const raceEnabled = false
