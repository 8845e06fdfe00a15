package fts

import (
	"sync"

	"github.com/blevesearch/bleve/v2/index/scorch"
)

// The first search's hits are bleve document numbers; their record ids
// are the documents' stored _id, which bleve reads from the segment's
// stored fields (about a microsecond each, a random read of the segment
// file): a hundred of them per search. A document number in a segment
// names the same document for the segment's life (segments are
// immutable; a merge makes a new one, under a new id), so the ids read
// are kept in a small direct-mapped table, and the words of the next
// questions, which return many of the same records, read them from it.

// docIDSlots is the number of entries of the table, 1<<docIDBits: 24
// bytes each, 384 KiB.
const (
	docIDBits  = 14
	docIDSlots = 1 << docIDBits
)

// docIDEntry is one segment document's record id; id 0 marks an empty
// slot (bleve's _id of an hmo record is its id, never 0).
type docIDEntry struct {
	seg uint64 // the segment's id in the index (scorch.SegmentSnapshot.Id)
	doc uint64 // the document's number in the segment
	id  uint64
}

// docIDCache is the table. The zero value is empty and ready; it
// allocates its slots at the first put. Safe for concurrent use.
type docIDCache struct {
	mu    sync.Mutex
	slots []docIDEntry
}

func docIDSlot(seg, doc uint64) uint64 {
	return ((seg*0x9e3779b97f4a7c15 ^ doc) * 0xbf58476d1ce4e5b9) >> (64 - docIDBits)
}

// get returns the record id of document doc of segment seg, and false
// when the table does not hold it.
func (c *docIDCache) get(seg, doc uint64) (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slots == nil {
		return 0, false
	}
	e := &c.slots[docIDSlot(seg, doc)]
	if e.id == 0 || e.seg != seg || e.doc != doc {
		return 0, false
	}
	return e.id, true
}

// put keeps id as the record id of document doc of segment seg,
// replacing whatever its slot held.
func (c *docIDCache) put(seg, doc, id uint64) {
	if id == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slots == nil {
		c.slots = make([]docIDEntry, docIDSlots)
	}
	c.slots[docIDSlot(seg, doc)] = docIDEntry{seg: seg, doc: doc, id: id}
}

// recordID is the record id of document doc (its number in seg) through
// the table: read, on a miss, by read, and kept.
func (c *docIDCache) recordID(seg *scorch.SegmentSnapshot, doc uint64, read func() (uint64, error)) (uint64, error) {
	if id, ok := c.get(seg.Id(), doc); ok {
		return id, nil
	}
	id, err := read()
	if err != nil {
		return 0, err
	}
	c.put(seg.Id(), doc, id)
	return id, nil
}
