package engine

import (
	"context"
	"fmt"
)

// FinishBuilds builds, and waits for, what the vector index would
// otherwise build in the background after the store's next Open
// (IndexFinisher): the vector file's partition (vecfile: of the int8 rows from 75K
// vectors, of the 4-bit rows from 500K).
// A command that writes much and exits (an import) calls it before
// Close: a build in the background stops at Close, so a store opened
// next only by short-lived commands would not finish it. An index not
// open is opened only when Close would open it (many changes it has not
// seen); else it is left as it is. progress, if
// not nil, is called with the work done and its total as it advances;
// when ctx ends first, it returns ctx's error and the build goes on
// until Close. It is safe for concurrent use with every other method.
func (e *Engine) FinishBuilds(ctx context.Context, progress func(done, total int64)) error {
	// An index not open is opened as Close would: when the changes it
	// has not seen are many.
	e.wmu.Lock()
	err := e.checkOpen()
	if err == nil && e.vec == nil && e.sinceCheckpoint > closeBacklog {
		err = e.openVector()
	}
	e.wmu.Unlock()
	if err != nil {
		return err
	}
	e.vecMu.RLock()
	v := e.vec
	e.vecMu.RUnlock()
	f, ok := v.(IndexFinisher)
	if !ok {
		return nil
	}
	if err := f.FinishBuilds(ctx, progress); err != nil {
		if e.closed.Load() { // closed meanwhile: the index with it
			return ErrClosed
		}
		return fmt.Errorf("hmo: finish the vector index: %w", err)
	}
	return nil
}
