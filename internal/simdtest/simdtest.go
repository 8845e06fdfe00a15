// Package simdtest runs a test once per kernel of a package that picks
// an assembly kernel at run time: with the assembly, where the CPU has
// it, and with the portable Go code. It is for tests only.
package simdtest

import "testing"

// Paths runs fn as the subtest "avx2" with *useAVX2 true, when it was
// true (the CPU has AVX2), and as "generic" with it false, and then
// restores it. A CPU without AVX2 runs the portable path only, and the
// test's log says so.
func Paths(t *testing.T, useAVX2 *bool, fn func(t *testing.T)) {
	t.Helper()
	saved := *useAVX2
	defer func() { *useAVX2 = saved }()
	for _, avx := range []bool{true, false} {
		if avx && !saved {
			t.Log("no AVX2 on this CPU: portable path only")
			continue
		}
		*useAVX2 = avx
		name := "generic"
		if avx {
			name = "avx2"
		}
		t.Run(name, fn)
	}
}
