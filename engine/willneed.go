package engine

import "encoding/binary"

// A question's reads by pread (pageReader) go one page at a time: from
// the page cache a few microseconds each, from the disk a few hundred.
// When a batch of them finds a leaf page out of the page cache (the
// store not read for a while, or evicted), the batch asks the kernel for
// the rest of its leaf pages at once (whenCold, willNeed): the reads that
// follow find them read together, which the disk serves far faster than
// one by one (BENCHMARKS.md, session 19: 300 random pages of a 1M store,
// 42-56 ms one at a time, 3-4 ms advised first). A batch whose pages are
// all cached pays nothing: its reads ask the kernel not to wait
// (readCached), and only one that would wait is taken as cold.

// readCachedFunc is readCached; tests replace it.
var readCachedFunc = readCached

// whenCold sets the work the reads of kv (a preadBucket; else nothing is
// done) run once, at the first leaf page of theirs found out of the page
// cache, until the next whenCold: the batch's advice to the kernel.
func whenCold(kv kvSeeker, f func()) {
	if p, ok := kv.(*preadBucket); ok && p.r != nil {
		p.r.onCold = f
	}
}

// willNeed asks the kernel to read the leaf pages that hold ids in
// bucket kv (a preadBucket; else nothing is done) into the page cache,
// without waiting for them: the leaf of each id is found from the branch
// pages kept in the page cache, and ids whose path is not kept are
// skipped. It reads no page itself.
func willNeed(kv kvSeeker, ids []uint64) {
	p, ok := kv.(*preadBucket)
	if !ok || p.r == nil || p.failed || !p.r.direct {
		return
	}
	r := p.r
	var key [8]byte
	var last uint64
	for _, id := range ids {
		binary.BigEndian.PutUint64(key[:], id)
		leaf, ok := r.keptLeafOf(p.root, key[:])
		if !ok || leaf == last {
			continue
		}
		last = leaf
		adviseWillNeed(r.fd, int64(leaf)*r.ps, r.ps)
	}
}

// keptLeafOf returns the id of the page that holds key under root as far
// as the kept branch pages tell: false when a page on the way is not
// kept as a branch, or the walk leaves the tree.
func (r *pageReader) keptLeafOf(root uint64, key []byte) (uint64, bool) {
	id := root
	for range maxPageDepth {
		if id < 2 || id >= r.hwm {
			return 0, false
		}
		b := r.cache.branch(r.txid, id)
		if b == nil {
			return id, id != root
		}
		id = b.kids[b.index(key)]
	}
	return 0, false
}
