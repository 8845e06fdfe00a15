//go:build !unix

package vecfile

import (
	"io"
	"os"
)

// mapFile reads the first size bytes of f into memory: no mmap here.
func mapFile(f *os.File, size int) ([]byte, error) {
	b := make([]byte, size)
	n, err := f.ReadAt(b, 0)
	if err != nil && err != io.EOF {
		return nil, err
	}
	clear(b[n:])
	return b, nil
}

func unmap([]byte) error { return nil }

const mirrored = true
