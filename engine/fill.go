package engine

import (
	bolt "go.etcd.io/bbolt"
)

// bbolt splits a leaf page, when a commit finds it overfull, so that the
// first page holds the given share of a page (Bucket.FillPercent) and the
// rest goes on. Its default, 0.5, suits keys that arrive in any order: a
// split page keeps half its room for the keys that will later land
// between its own. A key that arrives after every other key of its range
// never lands in a page already split, so in the buckets whose keys are
// given out in ascending order that half stayed empty: the store's leaf
// pages were less than half full (100K records: vectors 35 of 85 MB in
// use, records 14 of 31).
const (
	// fixedFill is for appended keys whose values are never rewritten
	// larger: pages are filled whole.
	fixedFill = 1.0
	// growFill is for appended keys whose values are rewritten in place
	// (a record's header and sources, a segment node's children, a
	// theme's facts): a tenth of each page is left for that growth, so
	// that a rewrite does not split the page.
	growFill = 0.9
)

// appendedBuckets are the buckets whose keys are ids, change-log
// sequences or event times, each under a fixed prefix (the segment
// tree's "n"+node and "p"+leaf), given out in ascending order, with the
// fill of their pages. The others (dedup's hashes, sessions, tier
// entries, meta) keep bbolt's default.
var appendedBuckets = []struct {
	name []byte
	fill float64
}{
	{bucketVectors, fixedFill}, {bucketChanges, fixedFill}, {bucketByTime, fixedFill}, {bucketNext, fixedFill},
	{bucketReindexVec, fixedFill}, {bucketEnrich, fixedFill},
	{bucketRecords, growFill}, {bucketDedupIDs, growFill}, {bucketEntities, growFill}, {bucketSegTree, growFill},
	{bucketEvents, growFill}, {bucketXMemory, growFill}, {bucketHistory, growFill},
}

// fillAppended sets the fill of the appended buckets in write
// transaction tx. bbolt reads a bucket's FillPercent when it commits,
// from the transaction's own bucket handle, which tx.Bucket returns
// every time: the setting holds for the whole transaction, and must be
// made in each.
func fillAppended(tx *bolt.Tx) {
	for _, a := range appendedBuckets {
		if b := tx.Bucket(a.name); b != nil {
			b.FillPercent = a.fill
		}
	}
}
