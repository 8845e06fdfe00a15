package keysort

// HeapSort is the introsort's fallback past its depth limit, which
// ordinary inputs do not reach.
var HeapSort = heapSort
