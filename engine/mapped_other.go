//go:build !linux

package engine

// releaseMapped keeps the mapping as it is where the kernel's advice is
// not known to leave a shared file mapping's contents intact.
func (d *boltDB) releaseMapped() error { return nil }
