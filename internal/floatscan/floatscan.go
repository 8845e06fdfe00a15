// Package floatscan is the scan of a window of scores for the first that
// reaches a bar: the text search's accumulated sums (float64, every one
// before it cleared to zero on the way) and the vector scan's int8
// scores (float32), with AVX2 on amd64 CPUs that have it (sixteen
// compared a step) and portable Go elsewhere, chosen once at run time.
// It holds no state and is safe for concurrent use on distinct windows.
package floatscan

import "math"

// ClearBelow sets win[j] to 0 for each j before the first i with
// win[i] >= bar (compared as Go compares float64: a NaN is never at or
// above it), and returns i, or len(win) when there is none (all of win is
// then 0). win[i] and what follows it are left as they were.
func ClearBelow(win []float64, bar float64) int {
	i := 0
	if useAVX2 && len(win) >= 16 {
		i = clearBelowAVX2(&win[0], len(win)&^15, bar)
	} else if bar > 0 {
		i = clearBelowBits(win, bar)
	}
	for ; i < len(win); i++ {
		if win[i] >= bar {
			return i
		}
		win[i] = 0
	}
	return len(win)
}

// clearBelowBits clears the groups of eight at the start of win whose
// largest bits are below bar's and returns the first group left (its
// start). A positive bar compares with a sum not negative as their bits
// do; a negative sum's bits are above every positive's, so its group is
// left for the caller to compare one by one.
func clearBelowBits(win []float64, bar float64) int {
	b := math.Float64bits(bar)
	i := 0
	for ; i+8 <= len(win); i += 8 {
		g := (*[8]float64)(win[i : i+8])
		m := max(math.Float64bits(g[0]), math.Float64bits(g[1]), math.Float64bits(g[2]), math.Float64bits(g[3]),
			math.Float64bits(g[4]), math.Float64bits(g[5]), math.Float64bits(g[6]), math.Float64bits(g[7]))
		if m >= b {
			return i
		}
		*g = [8]float64{}
	}
	return i
}

// FirstNotBelow32 returns the first i with !(win[i] < bar): win[i] at or
// above bar, or NaN (a NaN is not below anything); len(win) when there
// is none. A scan that takes only the scores not below its floor skips
// to each one with it.
func FirstNotBelow32(win []float32, bar float32) int {
	i := 0
	if useAVX2 && len(win) >= 8 {
		i = notBelow32AVX2(&win[0], len(win)&^7, bar)
	}
	for ; i < len(win); i++ {
		if !(win[i] < bar) {
			return i
		}
	}
	return len(win)
}
