//go:build unix

package engine

import (
	"os"
	"syscall"
)

// unlockFile releases a flock held through f.
func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
