//go:build unix

package offheap

import "syscall"

// Map returns n bytes of memory outside the Go heap, zeroed.
func Map(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// Unmap releases memory Map returned; b must be the whole of it.
func Unmap(b []byte) error { return syscall.Munmap(b) }
