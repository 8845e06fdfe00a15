//go:build race

package fts_test

// raceEnabled reports a -race build, whose sync.Pool drops items at
// random: allocation counts are not checked then.
const raceEnabled = true
