//go:build unix

package engine

import "syscall"

// mapAnon returns n bytes of memory outside the Go heap, zeroed: a
// private anonymous mapping, which the garbage collector neither scans
// nor counts in its heap goal.
func mapAnon(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// unmapAnon releases memory mapAnon returned.
func unmapAnon(b []byte) error { return syscall.Munmap(b) }
