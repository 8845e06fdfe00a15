// Package fts is hmo's full-text index: BM25 over record text, with exact
// filters on scope, session and time, built on bleve v2's scorch index. It
// implements engine.TextIndex.
//
// It uses bleve's lower packages (scorch, document, the analysers,
// searcher and collector) and not bleve's top-level package, which links
// bleve's older index type (upsidedown, with a protobuf runtime), every
// query type and the search-request machinery into the binary (2.7 MB
// when it was measured). The directory layout, the documents and the
// mapping stored in the index are the ones the top-level package wrote,
// so indexes written before open as they are, and bleve's own tools still
// read them.
//
// The index holds no text: bbolt is the source of truth, and the index
// returns record ids and scores only. Each document is one record under its
// id in decimal, with these fields:
//
//   - text, context, role: the record's own words, the turns before it
//     and its speaker, analysed by the index's Analyzer (by default Unicode
//     words, lowercased, English possessives and stop words removed,
//     Snowball English stems); searched with OR semantics and scored as
//     one document by BM25F (Scoring).
//   - scope, session: exact keywords, for filters only.
//   - time: a datetime in whole seconds, for range filters only.
//
// # Durability
//
// Apply writes the documents, the deletions and the caller's watermark (the
// last change-log sequence applied) in one scorch batch, which scorch
// introduces as one snapshot. By default Apply returns only after the
// persister has written the snapshot's new segment file (fsynced) and
// committed the snapshot, watermark included, to the index's root.bolt
// (fsynced). With Options.AsyncPersist (scorch's unsafe_batch) it returns
// once the batch is searchable, and DurableWatermark reports the
// watermark on disk. Either way the reopened index holds exactly the changes up to its
// Watermark, never part of a batch, and the engine replays the change log
// past it.
//
// Open checks that the directory holds an index built by this package with
// the same options and verifies the checksum of every segment file. A
// directory it cannot use fails with ErrCorrupt (or ErrIncompatible); the
// index is derived data, so the caller removes the directory and rebuilds it.
//
// # Scoring
//
// Scores are BM25F (Scoring), computed by this package, not bleve's
// scorer. The top k are found segment by segment, by MaxScore (Turtle
// and Flood, 1995), where words whose bounds together cannot lift a
// document into the top k only score the documents the others bring, or,
// where every word's postings would be read anyway, by adding each
// posting's contribution to its document's sum over a window of
// documents, the words in the query's order: both give the same scores
// to the last bit. A word's postings in one immutable scorch segment are
// read from the segment file (zap v17, without bleve's iterator) into
// decoded arrays kept in a cache bounded in bytes
// (Options.PostingsCache), searched by galloping seeks; the snapshot's
// deleted documents are skipped at query time. The result is the exact
// top k by BM25F. Scores are comparable within one query only.
//
// Files are created 0600 in 0700 directories.
package fts
