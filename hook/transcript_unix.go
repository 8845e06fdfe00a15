//go:build unix

package hook

import (
	"os"
	"syscall"
)

// openNoBlock opens path for reading without following a final symbolic
// link and without blocking on a FIFO or device.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
