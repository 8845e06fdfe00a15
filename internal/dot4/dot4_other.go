//go:build !amd64

package dot4

var useAVX2 = false

func dotsAVX2(q *int8, chunks int, rows *byte, stride int, out *int32, n int) {}

func dotsScaledAVX2(q *int8, chunks int, rows *byte, stride, fieldOff int, qsum float32, out *float32, n int) {
}
