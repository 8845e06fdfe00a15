// Package vecfile is hmo's exact vector index: every vector of a store in
// one contiguous memory-mapped matrix, scanned with SIMD dot products over
// all cores (internal/vecscan), with the scope, session and time filters
// applied during the scan. It implements engine.VectorIndex and
// engine.FilteredVectorIndex.
//
// The vectors live in the page cache, not on the Go heap: a process's
// anonymous memory does not grow with the archive. The id of each row is
// kept in the row's slot, and rows are appended in increasing id order, so
// an id is found by binary search over the mapped slots; only rows that
// arrive out of order (none in the engine's use) cost a map entry.
//
// Two files live in the index directory, and a third by default, all
// mode 0600 (in a large Int8Rescore index, ivf8, or q4 and ivf):
//
//	slots   a 4 KiB header page (two alternating copies of the header,
//	        each with a CRC, so a torn write leaves the previous one),
//	        then one 48-byte slot per row: id, event time, hashes of
//	        scope and session, flags, quantisation scale and a CRC-32C
//	        of the slot and its row
//	matrix  a 4 KiB header page naming the file's identity, then the
//	        rows: dims float32 (or int8) each
//	int8    (Float32 format with Options.Scan ScanInt8, the default) the
//	        int8 companion: each row quantised to int8 with its scale and
//	        checksum, 16-byte aligned (112 bytes at 100 dims, 28% of the
//	        float32 row). A search ranks every row with it (internal/dot8,
//	        AVX2 where the CPU has it) and rescores the best
//	        max(Rescore*k, RescoreMin) exactly from the matrix; it is
//	        derived data, regenerated from the matrix at Open when it is
//	        missing, stale or damaged (see companion.go)
//	q4      (Int8Rescore format, Options.QuickAbove live rows or more at
//	        Open) the 4-bit first pass: each row again as 4-bit codes of
//	        its offset from the rows' centre, 64 bytes at 100 dims. A
//	        search of that many rows ranks every row with it
//	        (internal/dot4), then only its best few by their int8 rows,
//	        read by pread: the int8 rows stay out of the resident set.
//	        Derived data like the companion (see quick.go)
//	ivf     (with a q4 file, Options.PartitionAbove live rows or more at
//	        Open) the q4 rows again, grouped in lists by their nearest
//	        k-means centroid: a search scans the rows of the Probes
//	        lists nearest to the query (a filtered one more, or every
//	        row when its filter passes few) and the rows appended or
//	        rewritten since the build, not every row. Derived data,
//	        built in the background after Open, or by FinishBuilds
//	        (see ivf.go)
//	ivf8    (Int8Rescore format with no q4 file,
//	        Options.Int8PartitionAbove live rows or more at Open) the
//	        same for the int8 rows of the matrix: they are copied in
//	        list order, and an unfiltered search scans with dot8 the
//	        rows of the Int8Probes nearest lists (and those outside the
//	        partition) for its candidates instead of every row; a
//	        filtered search scans every row. Derived data, built and
//	        checked as ivf
//
// An Int8Rescore index (the format of a store made by this version of
// hmo) keeps no float32 rows: its matrix holds the rows the int8
// companion would (quantised from the float32 unit vector, laid out as
// companion rows, checked by their slots' CRC) and there is no int8
// companion. Its searches return the best RescoreCandidates(k) rows by their
// int8 scores, and the caller, which keeps the float32 vectors (the
// engine, in bbolt), rescores them: the candidates, and so the final
// hits, are those of a Float32 index scanned with ScanInt8, at 48 + 112
// bytes a row on disk instead of 48 + 400 + 112 at 100 dims.
// Options.KeepFormat opens an index of another format as it was made.
//
// A Float32 index returns its rows by id (Vector, NextVector: the
// engine.VectorReader the engine's relevance null sample reads): one row,
// its checksum checked on the read whatever Open verified. A row is the
// vector Apply was given divided by its norm: for an embedder's unit
// vector that is the vector itself or differs in the last bit of some
// components.
//
// The header records the row count, the watermark (the last change-log
// sequence applied) and the matrix file's identity. Open verifies the
// header and every row's checksum (Options.SkipVerify skips the rows);
// any mismatch is ErrCorrupt, and the engine rebuilds the index from
// bbolt, the source of truth. Rows appended after the last Save are not
// counted by the header; rows changed in place after it (deletions,
// replacements) carry their own checksum. Either way the change log past
// the saved watermark is replayed over them, which repeats those changes.
package vecfile
