//go:build !amd64

package dot8

var useAVX2 = false

func dotsAVX2(q *int16, chunks int, rows *byte, stride int, out *int32, n int) {}

func dotsScaledAVX2(q *int16, chunks int, rows *byte, stride, scaleOff int, out *float32, n int) {}
