package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// compactTxBytes bounds the size of one copy transaction of CompactStore.
const compactTxBytes = 64 << 20

// CompactIndexes removes deleted entries from the index files now, in
// indexes that keep them until a compaction (Compacter): the tombstoned
// vectors of the vector index, the deleted documents in the text index's
// segments. With CompactStore after Close, a forgotten record leaves no
// bytes in the store's files. It can take as long as rebuilding the
// vector graph; writers wait meanwhile.
func (e *Engine) CompactIndexes(ctx context.Context) error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	// An index that is not open may hold tombstones in its files too.
	if err := e.openVector(); err != nil {
		return err
	}
	for _, ix := range []any{e.vec, e.text} {
		if c, ok := ix.(Compacter); ok {
			if err := c.Compact(ctx); err != nil {
				return fmt.Errorf("hmo: compact index: %w", err)
			}
		}
	}
	return nil
}

// CompactStore rewrites the store's bbolt file with its live data only.
// bbolt reuses the pages a deleted record occupied but does not clear
// them, so until then its bytes stay in the file; the copy holds none of
// them. The store must be closed: CompactStore takes its lock, waiting up
// to timeout, and fails with ErrLocked after that.
func CompactStore(dir string, timeout time.Duration) error {
	path := filepath.Join(dir, DBFile)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("hmo: compact %s: %w", dir, err)
	}
	src, err := openBolt(path, &bolt.Options{Timeout: timeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return fmt.Errorf("%w: %s", ErrLocked, dir)
	}
	if err != nil {
		return fmt.Errorf("hmo: compact %s: %w", dir, err)
	}
	defer src.Close()
	tmp := path + ".compact"
	if err := copyStore(src, tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("hmo: compact %s: %w", dir, err)
	}
	// The lock is on the old file, held until src closes: no other
	// process opens the store between the rename and then.
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("hmo: compact %s: %w", dir, err)
	}
	return syncDir(dir)
}

// copyStore copies src's live data into a new bbolt file at path.
func copyStore(src *bolt.DB, path string) error {
	os.Remove(path) // a copy left by an interrupted run
	dst, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	if err := bolt.Compact(dst, src, compactTxBytes); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// openAttempts bounds how often openBolt follows a replaced file.
const openAttempts = 3

// openBolt opens the bbolt file at path, making sure that the file it got
// the lock of is still the one at path. A process that waited for the
// lock while CompactStore replaced the file would otherwise serve, and
// write to, the old file, which no longer has a name: its writes would be
// lost. It then opens the new file.
func openBolt(path string, o *bolt.Options) (*bolt.DB, error) {
	for attempt := 1; ; attempt++ {
		var f *os.File
		oc := *o
		open := os.OpenFile
		if o.OpenFile != nil {
			open = o.OpenFile
		}
		oc.OpenFile = func(name string, flag int, mode os.FileMode) (*os.File, error) {
			fh, err := open(name, flag, mode)
			f = fh
			return fh, err
		}
		db, err := bolt.Open(path, 0o600, &oc)
		if err != nil {
			return nil, err
		}
		if same, err := stillAt(f, path); err != nil || same || attempt == openAttempts {
			if err == nil && !same {
				err = fmt.Errorf("hmo: %s keeps being replaced", path)
			}
			if err != nil {
				db.Close()
				return nil, err
			}
			return db, nil
		}
		db.Close()
	}
}

// stillAt reports whether f is the file at path.
func stillAt(f *os.File, path string) (bool, error) {
	if f == nil {
		return false, fmt.Errorf("hmo: open %s: no file", path)
	}
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	pi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(fi, pi), nil
}
