//go:build !linux

package vecfile

// adviseAway keeps the pages where the kernel's advice is not known to
// leave a shared file mapping's contents intact.
func adviseAway([]byte) error { return nil }
