package engine

// flusher writes the tiers' access counters (tier entries, the headers
// of records that left the active tiers, the walk's counters and the
// persona) in the background, so that the recall that makes them due
// does not wait for the commit and its fsync. The tier state owns it:
// startFlusher starts it, stopFlusher stops it before the last flush.
//
// What a crash loses: the counters of the accesses since the last
// committed flush (up to Options.FlushAccesses of them, and those of a
// flush under way), as when they were written inline. No record is lost
// or written twice: a flush rewrites the header of a record it reads in
// its own transaction, or deletes the tier entry of a record found gone.
type flusher struct {
	wake chan struct{} // buffered: a flush is due
	stop chan struct{} // closed by stopFlusher
	done chan struct{} // closed when the goroutine returns
}

// startFlusher starts the tier state's flusher. Not in a read-only open,
// whose accesses stay in memory.
func (e *Engine) startFlusher() {
	ts := e.tiers
	if ts == nil || e.opts.ReadOnly {
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.flusher != nil {
		return
	}
	f := &flusher{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	ts.flusher = f
	go func() {
		defer close(f.done)
		for {
			select {
			case <-f.stop:
				return
			case <-f.wake:
				// An error leaves the snapshot dirty (flushed): the next
				// flush, at the latest Close's, writes it or reports it.
				_ = e.flushBackground(ts)
			}
		}
	}()
}

// stopFlusher stops the flusher and waits for the flush it is writing,
// if any, and for the access of the last recall (tierState.jobs).
// The caller then flushes what is left. ts.mu is not held.
func (ts *tierState) stopFlusher() {
	if ts == nil {
		return
	}
	ts.jobs.Wait()
	ts.mu.Lock()
	f := ts.flusher
	ts.flusher = nil
	ts.mu.Unlock()
	if f == nil {
		return
	}
	close(f.stop)
	<-f.done
}

// signal makes a receive from c ready, unless one is already.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// flushDueSoon asks the flusher to write the dirty entries, or writes
// them now when there is no flusher. ts.mu is held.
func (e *Engine) flushDueSoon() error {
	f := e.tiers.flusher
	if f == nil {
		return e.flushTiers()
	}
	signal(f.wake)
	return nil
}

// flushBackground is flushTiers on the flusher's goroutine: ts.mu is held
// only while the snapshot is taken and while the flush ends, not during
// the commit.
func (e *Engine) flushBackground(ts *tierState) error {
	ts.mu.Lock()
	if !ts.flushDue() {
		ts.mu.Unlock()
		return nil
	}
	ts.flushMu.Lock()
	snap, err := ts.snapshot()
	ts.mu.Unlock()
	if err == nil {
		err = e.writeTiers(snap)
	}
	ts.flushMu.Unlock()
	ts.mu.Lock()
	ts.flushed(snap, err)
	ts.mu.Unlock()
	return err
}

// takeAccessErr returns the error of the access a recall made after its
// reply (recallTiered) that nothing has reported yet, and forgets
// it. ts.mu is held.
func (ts *tierState) takeAccessErr() error {
	err := ts.accessErr
	ts.accessErr = nil
	return err
}
