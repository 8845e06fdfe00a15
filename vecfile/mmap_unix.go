//go:build unix

package vecfile

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-only and shared, so that
// writes through the file show in the mapping. size is > 0.
func mapFile(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
}

func unmap(b []byte) error {
	if b == nil {
		return nil
	}
	return syscall.Munmap(b)
}

// mirrored reports whether a mapping is a heap copy that writes must
// update by hand.
const mirrored = false
