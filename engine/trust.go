package engine

import (
	"errors"
	"fmt"
	"os"
)

// ErrUntrusted means a store directory or a file in it may have been
// written by another user, so it is not used.
var ErrUntrusted = errors.New("hmo: not trusted")

// CheckDir refuses a store directory that another user owns or that
// group or others may write: another user could replace its files
// (plant a daemon description and token, swap the store). Open checks
// the store directory with it.
func CheckDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", ErrUntrusted, dir)
	}
	return checkOwner(dir, fi, 0o022, "chmod 700")
}

// CheckPrivateFile refuses a file that another user owns, that is not a
// regular file (a symbolic link included), or that group or others may
// read or write.
func CheckPrivateFile(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrUntrusted, path)
	}
	return checkOwner(path, fi, 0o077, "chmod 600")
}

func checkOwner(path string, fi os.FileInfo, badPerm os.FileMode, fix string) error {
	uid, ok := fileOwner(fi)
	if !ok {
		return nil // no owners on this system
	}
	if uid != os.Getuid() {
		return fmt.Errorf("%w: %s belongs to uid %d, not to you (uid %d): use a store directory of your own", ErrUntrusted, path, uid, os.Getuid())
	}
	if p := fi.Mode().Perm(); p&badPerm != 0 {
		return fmt.Errorf("%w: %s has mode %v, which lets other users change it: '%s %s' if you trust its contents", ErrUntrusted, path, p, fix, path)
	}
	return nil
}
