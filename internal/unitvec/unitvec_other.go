//go:build !amd64

package unitvec

var useAVX = false

func squaresAVX(b *byte, v *float32, n int) float64 { return 0 }

func scaleAVX(v *float32, n int, inv float64) {}
