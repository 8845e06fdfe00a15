package static

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"testing"
	"unsafe"
)

// TestEmbeddedTableReleased checks that decoding the embedded table gives
// its pages back (they leave the resident set, /proc/self/pagemap) and
// that the bytes read afterwards are still the table's.
func TestEmbeddedTableReleased(t *testing.T) {
	if _, err := loadEmbedded(); err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	if releasedTable < len(embeddedTable)-2*page {
		t.Fatalf("loading the embedded table released %d of its %d bytes", releasedTable, len(embeddedTable))
	}
	sum := crc32.Checksum(embeddedTable, castagnoli) // faults every page back in
	if n := residentPages(t, embeddedTable); n < len(embeddedTable)/page-2 {
		t.Fatalf("%d pages of the table resident after reading it all", n)
	}
	if got := releasePages(embeddedTable); got != releasedTable {
		t.Fatalf("released %d bytes, then %d", releasedTable, got)
	}
	if n := residentPages(t, embeddedTable); n > 2 {
		t.Fatalf("%d pages of the table still resident after releasing them", n)
	}
	if again := crc32.Checksum(embeddedTable, castagnoli); again != sum {
		t.Fatalf("the table reads %08x after its release, %08x before", again, sum)
	}
	if _, err := decodeTable(embeddedTable); err != nil {
		t.Fatalf("the released table no longer decodes: %v", err)
	}
}

// residentPages counts the pages of b mapped in this process.
func residentPages(t *testing.T, b []byte) int {
	t.Helper()
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skipf("no pagemap: %v", err)
	}
	defer f.Close()
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	first, end := start/page, (start+uintptr(len(b))+page-1)/page
	buf := make([]byte, 8*(end-first))
	if _, err := f.ReadAt(buf, int64(first*8)); err != nil {
		t.Skipf("pagemap: %v", err)
	}
	n := 0
	for i := 0; i < len(buf); i += 8 {
		if binary.LittleEndian.Uint64(buf[i:])&(1<<63) != 0 {
			n++
		}
	}
	return n
}
