package vecfile

import "syscall"

// adviseAway takes the pages of a shared file mapping out of this
// process's resident set (MADV_DONTNEED). They stay in the page cache
// and the next read maps them again with the file's contents.
func adviseAway(b []byte) error {
	if len(b) == 0 || mirrored {
		return nil
	}
	return syscall.Madvise(b, syscall.MADV_DONTNEED)
}
