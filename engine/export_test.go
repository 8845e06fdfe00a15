package engine

// StopTierFlusher stops the flusher of a tiered engine: the recall that
// makes the tier counters due writes them, as before the flusher.
func StopTierFlusher(e *Engine) { e.tiers.stopFlusher() }

// SettleTierIndexes applies the changes queued to the tier views'
// lexical indexes, as their next reader would.
func SettleTierIndexes(e *Engine) error {
	ts := e.tiers
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for t := 1; t <= 2; t++ {
		if _, err := ts.queuedIndex(t).settle(); err != nil {
			return err
		}
	}
	return nil
}
