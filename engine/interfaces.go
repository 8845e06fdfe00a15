package engine

import (
	"context"
	"time"
)

// Embedder turns text into fixed-length vectors.
//
// Implementations must be safe for concurrent use and deterministic: the
// same text and state give the same vector.
type Embedder interface {
	// Name identifies the model and its version, e.g. "static:wink-sg-100d/v1"
	// or "ollama:nomic-embed-text". It is stored with the store; a store
	// opened with another name is refused.
	Name() string
	// Dims is the length of every vector Embed returns.
	Dims() int
	// Embed returns one unit-length vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// TextPreparer is implemented by embedders that can do beforehand the
// part of Embed, and of CorpusAware.Observe when they implement it, that
// depends on a text alone (tokenising it): RememberBatches prepares a
// batch's texts while the previous batch commits, so that its
// transaction only weights them. The engine uses it only when the
// embedder is also its CorpusAware, or is not corpus-aware at all.
//
// Its methods are safe for concurrent use, with each other and with
// Embed and Observe.
type TextPreparer interface {
	// PrepareText prepares text. The result is immutable; it is passed
	// back only to this embedder's EmbedPrepared and ObservePrepared.
	PrepareText(text string) PreparedText
	// EmbedPrepared returns what Embed returns for texts where each text
	// is its prepared parts' texts concatenated, in order.
	EmbedPrepared(ctx context.Context, texts [][]PreparedText) ([][]float32, error)
	// ObservePrepared is Observe of the prepared texts' texts.
	ObservePrepared(texts []PreparedText)
}

// PreparedText is a text as a TextPreparer prepared it; only the
// embedder that made it reads it.
type PreparedText any

// CorpusAware is implemented by embedders that weight words by the store's
// own text (SIF word probabilities). The engine calls Observe with the text
// of every record it commits and persists the state in the same bbolt
// transaction, so the weighting survives restarts.
type CorpusAware interface {
	// Observe adds texts to the corpus statistics.
	Observe(texts []string)
	// Forget removes texts from the corpus statistics.
	Forget(texts []string)
	// MarshalState encodes the corpus statistics.
	MarshalState() ([]byte, error)
	// UnmarshalState replaces the corpus statistics with a decoded state.
	UnmarshalState(b []byte) error
}

// VectorHit is one result of a vector search.
type VectorHit struct {
	ID    uint64
	Score float32 // cosine similarity in [-1, 1]
	// Err, when above 0, bounds the error of an approximate Score (a
	// RescoredVectorIndex's): the exact cosine of the stored vector it
	// was made from is within Err of Score. 0: no bound known.
	Err float32
}

// VectorIndex is an approximate or exact nearest-neighbour index over unit
// vectors, keyed by record id.
//
// Implementations must be safe for concurrent use, validate their input
// (wrong dimension, NaN) and never panic.
type VectorIndex interface {
	// Apply adds vectors and removes ids, then records watermark as the
	// last change-log sequence applied. Adding an id that is present
	// replaces it.
	Apply(adds []VectorDoc, deletes []uint64, watermark uint64) error
	// Search returns up to k nearest live ids by cosine similarity, best first.
	Search(q []float32, k int) ([]VectorHit, error)
	// Watermark is the last change-log sequence applied.
	Watermark() uint64
	// Len is the number of live vectors.
	Len() int
	// Save persists the index; Watermark says how far it got.
	Save() error
	// Close saves and releases the index.
	Close() error
}

// VectorDoc is one vector to index.
type VectorDoc struct {
	ID     uint64
	Vector []float32
	// Scope, Session and Time are the record's labels, kept by indexes
	// that filter during the search (FilteredVectorIndex); others ignore
	// them.
	Scope, Session string
	Time           time.Time
}

// VectorFilter restricts a vector search. Zero fields do not filter.
type VectorFilter struct {
	Scope   string
	Session string
	From    time.Time // event time, inclusive
	To      time.Time // event time, exclusive
}

// FilteredVectorIndex is a VectorIndex that applies a filter while it
// searches, so that a selective filter still yields the k best matching
// vectors. The engine uses it when the index implements it.
type FilteredVectorIndex interface {
	VectorIndex
	// SearchFilter returns up to k nearest live ids that pass f, best
	// first.
	SearchFilter(q []float32, k int, f VectorFilter) ([]VectorHit, error)
}

// VectorReader is implemented by a VectorIndex that can return the
// vectors it holds: as Apply was given them, normalised to unit length
// (an embedder's unit vector may come back differing in the last bit of
// a component). The engine reads the relevance null sample through it
// when the index is open, keeps vectors exactly and has applied the whole
// change log, instead of seeking 256 scattered records in bbolt. Vectors
// of indexes that do not implement it are read from bbolt.
//
// Implementations must be safe for concurrent use with Apply and Search.
type VectorReader interface {
	// KeepsVectors reports whether the index holds its vectors exactly;
	// when false (a quantised index) Vector and NextVector report none.
	KeepsVectors() bool
	// Vector returns a copy of the live vector of id, and false when the
	// index holds none. A damaged row is an error.
	Vector(id uint64) ([]float32, bool, error)
	// NextVector returns the lowest live id at or above from and a copy
	// of its vector, and false when there is none.
	NextVector(from uint64) (uint64, []float32, bool, error)
}

// MemoryReleaser is an optional interface of a VectorIndex: it gives
// back the pages of its files this process has mapped, which it can read
// again later (Engine.ReleaseMemory). Implementations must be safe for
// concurrent use with searches and updates.
type MemoryReleaser interface {
	ReleaseMemory() error
}

// IndexFinisher is an optional interface of a VectorIndex: it builds,
// and waits for, the derived data it would otherwise build in the
// background after a later Open (Engine.FinishBuilds), calling progress,
// if not nil, with the work done and its total as the work advances.
// When ctx ends first it returns ctx's error. Implementations must be
// safe for concurrent use with searches and updates.
type IndexFinisher interface {
	FinishBuilds(ctx context.Context, progress func(done, total int64)) error
}

// RescoredVectorIndex is implemented by a VectorIndex that keeps only an
// approximation of its vectors (the vector file's Int8Rescore format:
// int8 rows, the float32 vectors staying in bbolt alone). Its Search and
// SearchFilter rank by approximate scores; the engine asks it for
// RescoreCandidates(k) candidates and scores them exactly from the
// stored vectors, normalised as the index normalises them
// (unitVector), then keeps the best k.
//
// Implementations must be safe for concurrent use.
type RescoredVectorIndex interface {
	// RescoreCandidates is the candidates to ask for to return the k
	// best exactly; 0 when the index's own scores are final.
	RescoreCandidates(k int) int
}

// TextDoc is one document for the full-text index. Its three text
// fields are scored as fields of one document (BM25F): the record's own
// text, the context turns indexed with it, and its speaker.
type TextDoc struct {
	ID      uint64
	Text    string // the record's own text
	Context string // the previous turns of the same session indexed with it (Options.IndexContext); may be empty
	Role    string // the record's speaker or role; may be empty
	Scope   string
	Session string
	Time    time.Time
}

// TextHit is one result of a full-text search.
type TextHit struct {
	ID    uint64
	Score float64 // BM25, unnormalised
	// Coverage is the IDF-weighted share of the query's distinct terms
	// that the document contains, in [0, 1]: 1 when it has every term.
	// Unlike Score it does not depend on the corpus size or the query
	// length. Indexes that do not compute it leave it 0.
	Coverage float64
}

// TextFilter restricts a full-text search. Zero fields do not filter.
type TextFilter struct {
	Scope   string
	Session string
	From    time.Time // inclusive
	To      time.Time // exclusive
	// Floor, when positive, is a score that at least k of the documents
	// searched for are known to reach (the retrieval pipeline's feedback
	// search knows one from its first pass). It filters nothing: it is a
	// hint that lets an index skip documents scoring below it sooner,
	// and an index that cannot use it ignores it.
	Floor float64
	// NoCoverage says the caller does not read TextHit.Coverage: an index
	// may then leave it 0 and skip working it out. It filters nothing.
	NoCoverage bool
}

// TextPool bounds a text search's cost: when the query's words have
// more postings than Postings, the index scores the pool's documents
// alone instead of searching every document.
type TextPool struct {
	// Docs returns the pool's documents as Apply was given them (the
	// records a first search found). The index calls it only when it
	// scores the pool alone.
	Docs func() ([]TextDoc, error)
	// IDs, when not nil, are the ids of the records Docs reads (the
	// first search's hits; Docs leaves out those that no longer exist).
	// An index that still holds every one of them where it found them
	// may score them from its own postings and not call Docs; otherwise
	// it calls Docs. Default nil: Docs.
	IDs []uint64
	// Postings is how many postings (one word in one field of one
	// document) the query's words may have for the search to stay
	// exhaustive. It must be positive.
	Postings int
}

// PooledSearcher is implemented by text indexes that can bound a search
// by a pool (the retrieval pipeline's feedback search on a large
// archive). The engine uses it when the index implements it, and Search
// otherwise.
type PooledSearcher interface {
	// SearchPool is Search when the query's words have at most
	// p.Postings postings. Otherwise it returns the k best of p.Docs()
	// by the score Search gives them, skipping those f filters out.
	SearchPool(ctx context.Context, query string, k int, f TextFilter, p TextPool) ([]TextHit, error)
}

// Compacter is implemented by indexes that keep deleted entries in their
// files until a compaction (tombstoned vectors, deleted documents in
// segments). Compact drops them now; the engine calls it when the user
// purges the store.
type Compacter interface {
	Compact(ctx context.Context) error
}

// TextIndex is a lexical (BM25) index keyed by record id.
//
// Implementations must be safe for concurrent use.
type TextIndex interface {
	// Apply indexes docs and removes ids, durably recording watermark in the
	// same batch.
	Apply(docs []TextDoc, deletes []uint64, watermark uint64) error
	// Search returns up to k ids by BM25 score, best first.
	Search(ctx context.Context, query string, k int, f TextFilter) ([]TextHit, error)
	// Watermark is the last change-log sequence applied.
	Watermark() (uint64, error)
	// Close releases the index.
	Close() error
}

// TermHolder is implemented by a TextIndex that can tell, without
// ranking, whether a document holds every term of a query in its text
// (TextDoc.Text, not Context or Role). The tier walk asks the archive's
// index whether any record of Tiers 1 and 2 holds a question's terms
// before it fills Tier 2's own index (which analyses every record of the
// two tiers): when none does, no result of those tiers can reach a
// coverage of 1, and the walk goes on to the archive without filling it.
// It does so only when both indexes report the same Analysis.
type TermHolder interface {
	// HoldsAll reports whether some live document whose id passes keep
	// holds every distinct term of query in its text. A query without
	// terms is held (nothing rules it out).
	HoldsAll(ctx context.Context, query string, keep func(id uint64) bool) (bool, error)
	// Analysis names how the index turns text into terms: two indexes
	// with the same Analysis hold the same terms for the same text.
	Analysis() string
}

// DurableWatermarker is implemented by a TextIndex whose Apply may return
// before the changes are on disk. The engine trims its change log only up
// to DurableWatermark, so that after a crash the index catches up from
// the log.
type DurableWatermarker interface {
	// DurableWatermark is the highest watermark known to be on disk.
	DurableWatermark() (uint64, error)
}

// Enricher is the language-model side of ingestion and persona upkeep (HMO
// section 3.1 and 3.4). The engine calls it from its enrichment worker,
// after a record is committed, never under its locks; any error makes the
// engine keep the embedded default (heuristic I0, extractive summary,
// extractive profile) and count the fallback. Errors should wrap
// ErrModelUnavailable, ErrModelNotFound, ErrModelOutput or
// context.DeadlineExceeded so the fallback reason is reported.
//
// Implementations must be safe for concurrent use.
type Enricher interface {
	// Importance scores a record's initial importance I0 on [1, 10] (HMO
	// Eq. 3, the rubric of the paper's Appendix A) given the user's
	// persona profile (may be empty).
	Importance(ctx context.Context, text, profile string) (float64, error)
	// Compress returns the compressed representation of long or complex
	// content (HMO Eq. 2). The raw text stays stored.
	Compress(ctx context.Context, text string) (Compressed, error)
	// Profile writes the persona's text profile from the extractive one
	// (salient terms and statements), when the drift gate fires.
	Profile(ctx context.Context, extractive string) (string, error)
}

// Compressed is a compressed representation of a record.
type Compressed struct {
	Summary string
	Kind    string // SummarySemantic, SummaryEpisodic or SummaryCore
}

// Kinds of compressed representation (HMO Eq. 2).
const (
	SummarySemantic   = "semantic"   // facts and knowledge, e.g. documentation or code
	SummaryEpisodic   = "episodic"   // an event: who did what, when
	SummaryCore       = "core"       // a lasting trait, preference or constraint of the user
	SummaryExtractive = "extractive" // the embedded fallback: selected sentences of the text
)

// StepStats counts one language-model step: how often it ran, how often
// the model's answer was used, and how often the embedded default was
// used instead, by reason.
type StepStats struct {
	Step      string            `json:"step"`
	Calls     uint64            `json:"calls"`
	OK        uint64            `json:"ok"`
	Fallbacks uint64            `json:"fallbacks"`
	Reasons   map[string]uint64 `json:"reasons,omitempty"`
}

// StepReporter is implemented by a Sufficiency (or Enricher) that counts
// its own calls and fallbacks; Stats includes its counters.
type StepReporter interface {
	StepStats() []StepStats
}
