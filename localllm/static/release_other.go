//go:build !linux

package static

// releasePages keeps every page where the kernel's advice is not known
// to leave a private file mapping's contents intact.
func releasePages(b []byte) int { return 0 }
