// Package fts is hmo's full-text index: BM25 over record text, with exact
// filters on scope, session and time, built on bleve v2's scorch index. It
// implements engine.TextIndex.
//
// It uses bleve's lower packages (scorch, document, the analysers,
// searcher and collector) and not bleve's top-level package, which links
// bleve's older index type (upsidedown, with a protobuf runtime), every
// query type and the search-request machinery into the binary: 2.7 MB of
// hmo's 35.6 MB. The directory layout, the documents and the mapping
// stored in the index are the ones the top-level package wrote, so indexes
// written before open as they are, and bleve's own tools still read them.
//
// The index holds no text: bbolt is the source of truth, and the index
// returns record ids and scores only. Each document is one record under its
// id in decimal, with these fields:
//
//   - text: analysed by the index's Analyzer (by default Unicode words,
//     lowercased, English possessives and stop words removed, Snowball
//     English stems); searched with OR semantics and scored with bleve's
//     BM25.
//   - scope, session: exact keywords, for filters only.
//   - time: a datetime in whole seconds, for range filters only.
//
// # Durability
//
// Apply writes the documents, the deletions and the caller's watermark (the
// last change-log sequence applied) in one scorch batch. Scorch introduces
// the batch as one snapshot, and, since this package leaves scorch's
// unsafe_batch off, Apply returns only after the persister has written the
// snapshot's new segment file (fsynced) and committed the snapshot,
// watermark included, to the index's root.bolt (fsynced). After a crash the
// reopened index therefore holds exactly the changes up to its Watermark,
// never part of a batch, and at least every batch Apply returned from; the
// engine replays the change log past the watermark.
//
// Open checks that the directory holds an index built by this package with
// the same options and verifies the checksum of every segment file. A
// directory it cannot use fails with ErrCorrupt (or ErrIncompatible); the
// index is derived data, so the caller removes the directory and rebuilds it.
//
// # Scoring
//
// Bleve's BM25 (k1 = 1.2, b = 0.75) differs from the textbook formula: term
// frequency enters as its square root, each term's weight is its idf times
// a query normalisation times idf again, and a disjunction multiplies the
// sum by the fraction of query terms the document matches. Scores are
// comparable within one query only.
//
// Files are created 0600 in 0700 directories.
package fts
