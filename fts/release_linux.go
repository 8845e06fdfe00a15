package fts

import (
	"syscall"
	"unsafe"
)

// faultAround is the span the kernel maps around a faulting page of a
// file mapping (fault_around_bytes, 64 KiB by default): reading one page
// of a list makes its cached neighbours resident too.
const faultAround = 64 << 10

// releaseList takes the pages of mem[lo:hi], widened to the fault-around
// spans they fall in, out of this process's resident set once a list
// read from them is decoded (MADV_DONTNEED). mem is a segment's whole
// read-only file mapping (zap.Segment.Data): the pages stay in the page
// cache, and the next read of any of them maps it again with the file's
// contents, so a concurrent reader sees the same bytes. The decoded list
// is what later searches read (the postings cache); without this the
// lists a process ever decoded stay mapped beside their decoded copies.
// Only advice: an error changes nothing and is ignored.
func releaseList(mem []byte, lo, hi uint64) {
	if lo >= hi || hi > uint64(len(mem)) {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	if base%uintptr(syscall.Getpagesize()) != 0 {
		return // not the start of a mapping: leave it alone
	}
	// The spans are aligned in the address space, as the kernel aligns
	// them, and clipped to the mapping.
	start := (uint64(base) + lo) &^ (faultAround - 1)
	end := (uint64(base) + hi + faultAround - 1) &^ (faultAround - 1)
	lo = max(start, uint64(base)) - uint64(base)
	hi = min(end-uint64(base), uint64(len(mem)))
	_ = syscall.Madvise(mem[lo:hi], syscall.MADV_DONTNEED)
}
