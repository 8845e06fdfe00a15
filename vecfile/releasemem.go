package vecfile

import (
	"errors"
	"fmt"
)

// ReleaseMemory gives back the pages of the index's files that this
// process has mapped (every search maps the whole int8 matrix). They stay
// in the page cache, so the next search maps them again at the cost of
// minor faults: for a process going idle (engine.MemoryReleaser). Only
// Linux releases. It is safe for concurrent use with searches and
// updates.
func (x *Index) ReleaseMemory() error {
	x.mu.RLock() // the mappings are replaced only under mu's write lock
	defer x.mu.RUnlock()
	if x.closed {
		return ErrClosed
	}
	var part []byte
	if x.part != nil {
		part = x.part.m
	}
	if err := errors.Join(adviseAway(x.slots), adviseAway(x.mat), adviseAway(x.comp), adviseAway(x.q4), adviseAway(part)); err != nil {
		return fmt.Errorf("vecfile: release memory: %w", err)
	}
	return nil
}
