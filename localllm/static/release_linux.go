package static

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// releasePages tells the kernel that this process will not read the
// whole pages inside b again soon, so that they leave its resident set.
// b must be memory the program never writes: the executable's own data,
// such as the embedded table once it is decoded. Its mapping is private
// and backed by the executable file, so a later read (a test decoding
// the table again) faults the same bytes back in from the file. The
// pages at either end, which b may share with other variables, are kept.
// It returns the bytes released; an error of madvise releases nothing
// and is not one the caller can act on.
func releasePages(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	first := (start + page - 1) &^ (page - 1)
	last := (start + uintptr(len(b))) &^ (page - 1)
	if last <= first {
		return 0
	}
	inner := b[first-start : last-start]
	if unix.Madvise(inner, unix.MADV_DONTNEED) != nil {
		return 0
	}
	return len(inner)
}
