//go:build !unix

package offheap

// Map fails with ErrUnsupported: the memory is then the Go heap's.
func Map(int) ([]byte, error) { return nil, ErrUnsupported }

// Unmap does nothing.
func Unmap([]byte) error { return nil }
