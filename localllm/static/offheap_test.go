package static

import (
	"bytes"
	"errors"
	"runtime"
	"testing"

	"github.com/hmo-dev/hmo/internal/offheap"
)

// heapAlloc is the live heap after a collection.
func heapAlloc() uint64 {
	runtime.GC()
	var st runtime.MemStats
	runtime.ReadMemStats(&st)
	return st.HeapAlloc
}

// TestEmbeddedTableOffHeap: the decoded embedded table (11.3 MB) is kept
// outside the Go heap, and is the table decompressTable decodes.
func TestEmbeddedTableOffHeap(t *testing.T) {
	if _, err := offheap.Map(1); errors.Is(err, offheap.ErrUnsupported) {
		t.Skip(err)
	}
	before := heapAlloc()
	raw, err := decompressOffHeap(embeddedTable)
	if err != nil {
		t.Fatal(err)
	}
	grew := int64(heapAlloc()) - int64(before)
	t.Logf("decoded %d bytes; the live heap grew by %d", len(raw), grew)
	if grew > int64(len(raw))/10 {
		t.Fatalf("the live heap grew by %d bytes decoding a %d-byte table off the heap", grew, len(raw))
	}
	want, err := decompressTable(embeddedTable)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, want) {
		t.Fatal("the table decoded off the heap differs from the one decoded on it")
	}
	if _, err := parseTable(raw); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(raw)
	if err := offheap.Unmap(raw); err != nil {
		t.Fatal(err)
	}
}
