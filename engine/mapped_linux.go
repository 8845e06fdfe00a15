package engine

import (
	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// releaseMapped takes the store file's pages out of this process's
// mapping (madvise MADV_DONTNEED). They stay in the kernel's page cache,
// so the next read maps them again without reading the disk. The read
// transaction holds bbolt's mapping lock: the mapping cannot be replaced
// while it is advised. bbolt maps the file read-only and writes through
// the file, so nothing written is lost.
func (d *boltDB) releaseMapped() error {
	return d.View(func(tx *bolt.Tx) error {
		data := d.DB.Info().Data
		n := uintptr(tx.Size()) &^ uintptr(unix.Getpagesize()-1)
		if data == 0 || n == 0 {
			return nil
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, data, n, unix.MADV_DONTNEED); errno != 0 {
			return errno
		}
		return nil
	})
}
