package hnsw

import "context"

// Compact drops the tombstoned slots now, with their vectors, rebuilds the
// graph from the live vectors if the index has one, and saves. After it a
// deleted vector is neither in memory nor in the index files (Apply only
// compacts past Options.CompactRatio). It can take as long as a graph
// build; searches go on meanwhile, other Apply calls wait.
func (x *Index) Compact(_ context.Context) error {
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	x.mu.RLock()
	closed, tomb, withGraph := x.closed, x.ntomb, len(x.slots) > x.opts.ExactBelow
	x.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if tomb > 0 {
		if err := x.rebuild(withGraph); err != nil {
			return err
		}
	}
	x.saveMu.Lock()
	defer x.saveMu.Unlock()
	return x.save()
}
