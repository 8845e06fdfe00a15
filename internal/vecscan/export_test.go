package vecscan

// HeapSort is Sort's fallback past its depth limit.
func HeapSort(hits []Hit) { heapSort(hits) }
