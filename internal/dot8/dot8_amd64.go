package dot8

import "golang.org/x/sys/cpu"

// useAVX2 is whether the CPU and OS support AVX2.
var useAVX2 = cpu.X86.HasAVX2

// dotsAVX2 sets out[i], i < n, to the dot product of the chunks*16 int16
// at q with the chunks*16 int8 at rows+i*stride.
//
//go:noescape
func dotsAVX2(q *int16, chunks int, rows *byte, stride int, out *int32, n int)

// dotsScaledAVX2 is dotsAVX2 with each sum converted to float32 and
// multiplied by the float32 at byte scaleOff of its row.
//
//go:noescape
func dotsScaledAVX2(q *int16, chunks int, rows *byte, stride, scaleOff int, out *float32, n int)
