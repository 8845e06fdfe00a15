package dot4

import "golang.org/x/sys/cpu"

// useAVX2 is whether the CPU and OS support AVX2.
var useAVX2 = cpu.X86.HasAVX2

// dotsAVX2 sets out[i], i < n, to the dot product of the split query at
// q (chunks*32 even components, then chunks*32 odd ones) with the
// chunks*32 code bytes at rows+i*stride.
//
//go:noescape
func dotsAVX2(q *int8, chunks int, rows *byte, stride int, out *int32, n int)

// dotsScaledAVX2 is dotsAVX2 with each sum d turned into lo*qsum +
// step*d, lo and step the float32s at bytes fieldOff and fieldOff+4 of
// its row.
//
//go:noescape
func dotsScaledAVX2(q *int8, chunks int, rows *byte, stride, fieldOff int, qsum float32, out *float32, n int)
