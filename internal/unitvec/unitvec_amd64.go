package unitvec

import "golang.org/x/sys/cpu"

// useAVX is whether the CPU and OS support AVX.
var useAVX = cpu.X86.HasAVX

// squaresAVX copies the n float32 at b (little-endian, n a multiple of
// 4) to v and returns the float64 sum of their squares, added one after
// the other in order from 0.
//
//go:noescape
func squaresAVX(b *byte, v *float32, n int) float64

// scaleAVX sets each of v[:n] (n a multiple of 8) to float32(float64(v[i]) * inv).
//
//go:noescape
func scaleAVX(v *float32, n int, inv float64)
