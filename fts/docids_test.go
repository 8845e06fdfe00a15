package fts

import (
	"errors"
	"testing"

	"github.com/blevesearch/bleve/v2/index/scorch"
)

// TestDocIDCache: a document's id is read once and then served from the
// table; another segment's document of the same number, or a document
// whose slot another took, is read again; a failed read keeps nothing.
func TestDocIDCache(t *testing.T) {
	var c docIDCache
	if _, ok := c.get(1, 5); ok {
		t.Fatal("an empty table holds a document")
	}
	c.put(1, 5, 10)
	// A second document of another segment in the same slot.
	var seg2, doc2 uint64
	for s := uint64(2); seg2 == 0; s++ {
		for d := uint64(0); d < 1<<16; d++ {
			if docIDSlot(s, d) == docIDSlot(1, 5) {
				seg2, doc2 = s, d
				break
			}
		}
	}
	for _, c2 := range []struct {
		name     string
		seg, doc uint64
		id       uint64
		ok       bool
	}{
		{"the document put", 1, 5, 10, true},
		{"its number in another segment", 2, 5, 0, false},
		{"another number in its segment", 1, 6, 0, false},
		{"a document of its slot not put", seg2, doc2, 0, false},
	} {
		if id, ok := c.get(c2.seg, c2.doc); id != c2.id || ok != c2.ok {
			t.Errorf("%s: get(%d, %d) = %d, %t; want %d, %t", c2.name, c2.seg, c2.doc, id, ok, c2.id, c2.ok)
		}
	}
	c.put(seg2, doc2, 20)
	if _, ok := c.get(1, 5); ok {
		t.Error("a document whose slot was taken is still held")
	}
	if id, ok := c.get(seg2, doc2); id != 20 || !ok {
		t.Errorf("get(%d, %d) = %d, %t; want 20, true", seg2, doc2, id, ok)
	}
	c.put(3, 7, 0) // id 0 marks an empty slot: never kept
	if _, ok := c.get(3, 7); ok {
		t.Error("id 0 was kept")
	}
}

// TestDocIDCacheReadsOnce: recordID reads a document's id on its first
// use only, and keeps nothing when the read fails.
func TestDocIDCacheReadsOnce(t *testing.T) {
	x, _ := segmentedIndex(t)
	r, err := x.s.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	segs := r.(*scorch.IndexSnapshot).Segments()
	var c docIDCache
	reads := 0
	read := func(id uint64, err error) func() (uint64, error) {
		return func() (uint64, error) { reads++; return id, err }
	}
	fail := errors.New("unreadable")
	if _, err := c.recordID(segs[0], 3, read(0, fail)); !errors.Is(err, fail) {
		t.Fatalf("a failed read: %v, want its error", err)
	}
	for i, want := range []int{2, 2} {
		id, err := c.recordID(segs[0], 3, read(42, nil))
		if err != nil || id != 42 || reads != want {
			t.Fatalf("use %d: %d, %v after %d reads; want 42 after %d", i+1, id, err, reads, want)
		}
	}
	if len(segs) > 1 {
		if id, _ := c.recordID(segs[1], 3, read(43, nil)); id != 43 || reads != 3 {
			t.Fatalf("another segment's document 3: %d after %d reads; want 43 after 3", id, reads)
		}
	}
}
