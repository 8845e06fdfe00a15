//go:build !linux

package engine

// adviseWillNeed does nothing where posix_fadvise is not used.
func adviseWillNeed(int, int64, int64) {}

// readCached reads nothing where preadv2 is not used: the caller reads
// as usual.
func readCached(int, []byte, int64) (done, cold bool) { return false, false }
