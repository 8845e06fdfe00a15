// Package offheap hands out memory outside the Go heap: private
// anonymous mappings, which the garbage collector neither scans nor
// counts in its heap goal. For large buffers that live long (decoded
// tables, cached postings, pages): on the heap, each would let the heap
// grow by as much again before the next collection. The memory must hold
// no Go pointers.
package offheap

import "errors"

// ErrUnsupported is returned by Map where the system has no anonymous
// mappings; the caller then uses the Go heap.
var ErrUnsupported = errors.New("offheap: no anonymous mappings")
