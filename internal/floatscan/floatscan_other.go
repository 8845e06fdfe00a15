//go:build !amd64

package floatscan

var useAVX2 = false

func clearBelowAVX2(p *float64, n int, bar float64) int { return 0 }

func notBelow32AVX2(p *float32, n int, bar float32) int { return 0 }
