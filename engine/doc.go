// Package engine is the domain core of hmo: records, the durable store,
// ingestion, hybrid recall and the small interfaces it consumes (Embedder,
// VectorIndex, TextIndex). Adapters such as hnsw, fts, localllm/static and
// localllm/ollama implement those interfaces; engine never imports them.
//
// bbolt is the source of truth. Every mutation is committed to bbolt first
// and recorded in a change log; the derived indexes carry a watermark (the
// last change-log sequence they applied) and catch up on Open, so a crash
// between a commit and an index update loses nothing.
package engine
