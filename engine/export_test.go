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

// DecodeUnit is decodeUnit: a stored vector's bytes decoded into v
// divided by its norm.
func DecodeUnit(b []byte, v []float32) bool { return decodeUnit(b, v) }

// DecodeNormalize is what the rescoring made of a stored vector before
// decodeUnit: decodeVector, then normalize.
func DecodeNormalize(b []byte, dims int) ([]float32, bool) {
	v, err := decodeVector(b, dims)
	if err != nil || !normalize(v) {
		return nil, false
	}
	return v, true
}
