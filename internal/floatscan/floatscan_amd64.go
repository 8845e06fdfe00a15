package floatscan

import "golang.org/x/sys/cpu"

// useAVX2 is whether the CPU and OS support AVX2.
var useAVX2 = cpu.X86.HasAVX2

// clearBelowAVX2 clears the groups of sixteen of p[:n] (n a multiple of
// 16) that hold nothing at or above bar, up to the first that does, and
// returns that group's start (n when none).
//
//go:noescape
func clearBelowAVX2(p *float64, n int, bar float64) int

// notBelow32AVX2 returns the start of the first group of sixteen of
// p[:n] (n a multiple of 8), or of its last eight when n is not a
// multiple of 16, that holds a score not below bar (at or above it, or
// NaN), n when none does.
//
//go:noescape
func notBelow32AVX2(p *float32, n int, bar float32) int
