package engine

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseWillNeed starts the kernel's read of n bytes of the file fd at
// off into the page cache, without waiting (POSIX_FADV_WILLNEED).
func adviseWillNeed(fd int, off, n int64) {
	_ = unix.Fadvise(fd, off, n, unix.FADV_WILLNEED)
}

// noWaitRefused is set once the kernel refuses preadv2's RWF_NOWAIT (an
// older kernel, or a file system without it): readCached then reads
// nothing.
var noWaitRefused atomic.Bool

// readCached reads len(p) bytes of the file fd at off into p if they are
// all in the page cache, without waiting for the disk (preadv2 with
// RWF_NOWAIT). done says p was read; cold, that some of it was not in
// the page cache. Neither: the kernel cannot tell (the caller reads as
// usual).
func readCached(fd int, p []byte, off int64) (done, cold bool) {
	if len(p) == 0 || noWaitRefused.Load() {
		return false, false
	}
	iov := unix.Iovec{Base: &p[0]}
	iov.SetLen(len(p))
	// The offset goes in two words, low and high (on 64-bit Linux the
	// low one holds it all), as x/sys/unix's Preadv2 passes it.
	const half = unsafe.Sizeof(uintptr(0)) * 4
	lo, hi := uintptr(off), uintptr(uint64(off)>>half>>half)
	n, _, errno := unix.Syscall6(unix.SYS_PREADV2, uintptr(fd), uintptr(unsafe.Pointer(&iov)), 1, lo, hi, unix.RWF_NOWAIT)
	switch errno {
	case 0:
		// A short read: part of it was not cached (or the file ends
		// there, which the caller's read reports).
		return int(n) == len(p), int(n) != len(p)
	case unix.EAGAIN:
		return false, true
	case unix.ENOSYS, unix.EOPNOTSUPP, unix.EINVAL:
		noWaitRefused.Store(true)
	}
	return false, false
}
