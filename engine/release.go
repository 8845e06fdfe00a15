package engine

import "fmt"

// ReleaseMemory gives back the pages of the store file and of the vector
// index's files (when the index keeps them mapped: MemoryReleaser) that
// this process has mapped while reading them. A read through a mapping
// maps the page it reads, and the kernel maps up to 64 KiB of cached
// neighbours with it; a query reads the records and vectors it needs by
// pread (pageReader), which maps nothing, but opening the store, writes,
// the tiers and the vector file's scans read through mappings, and their
// pages count in the process's resident size although they are shared
// page cache. The pages stay in the page cache, so the next read maps
// what it reads again at the cost of minor faults: call it when the
// process goes idle, not between queries. Only Linux releases; elsewhere it does
// nothing. It is safe for concurrent use with every other method.
func (e *Engine) ReleaseMemory() error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	if err := e.db.releaseMapped(); err != nil {
		return fmt.Errorf("hmo: release memory: %w", err)
	}
	e.vecMu.RLock()
	v := e.vec
	e.vecMu.RUnlock()
	if r, ok := v.(MemoryReleaser); ok {
		if err := r.ReleaseMemory(); err != nil {
			if e.closed.Load() { // closed meanwhile: the index with it
				return ErrClosed
			}
			return fmt.Errorf("hmo: release memory: %w", err)
		}
	}
	return nil
}
