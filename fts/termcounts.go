package fts

import (
	"sync"

	"github.com/blevesearch/bleve/v2/index/scorch"
)

// A search's statistics need each word's live postings in each field of
// each segment. For a word whose decoded postings the cache holds they
// are counted from its arrays; for the others bleve looks the word up in
// the segment's dictionaries and reads its postings list's header, three
// lookups per segment: about two hundred a pooled search, whose added
// words are seldom searched themselves and so seldom decoded. The counts
// of a word in a segment change only when documents of the segment are
// deleted, and a segment's deleted documents only grow, so the counts
// are kept by segment, number of deleted documents and word.

// termCountCap bounds the counts kept (about 100 bytes each); at the
// cap the table starts over.
const termCountCap = 1 << 14

type termCountKey struct {
	seg     uint64 // scorch.SegmentSnapshot.Id
	deleted uint64 // the segment's deleted documents in the snapshot
	term    string
}

// termCounts is the table. The zero value is empty and ready. Safe for
// concurrent use.
type termCounts struct {
	mu sync.Mutex
	m  map[termCountKey][nFields]uint64
}

func countKey(seg *scorch.SegmentSnapshot, term string) termCountKey {
	k := termCountKey{seg: seg.Id(), term: term}
	if del := seg.Deleted(); del != nil {
		k.deleted = del.GetCardinality()
	}
	return k
}

func (c *termCounts) get(k termCountKey) ([nFields]uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *termCounts) put(k termCountKey, v [nFields]uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= termCountCap {
		c.m = make(map[termCountKey][nFields]uint64, 1024)
	}
	c.m[k] = v
}
