package fts

import (
	"fmt"
	"time"
)

// Analyzer names the text analysis applied to documents and queries. It is
// fixed when the index is created; opening an index with another analyzer
// fails with ErrIncompatible.
type Analyzer string

// Analyzers. All split text into words with the Unicode word-boundary rules
// (UAX #29) and lowercase them.
const (
	// AnalyzerEnglish removes English possessives ("Mel's" -> "mel"), drops
	// bleve's English stop-word list ("the", "did", "to", ...) and stems
	// with the Snowball English (Porter2) stemmer.
	AnalyzerEnglish Analyzer = "english"
	// AnalyzerEnglishKeepStop is AnalyzerEnglish without stop-word removal.
	AnalyzerEnglishKeepStop Analyzer = "english-keepstop"
	// AnalyzerStandard is bleve's "standard" analyzer: lowercase and English
	// stop words, no stemming.
	AnalyzerStandard Analyzer = "standard"
	// AnalyzerPlain only lowercases: no stop words, no stemming.
	AnalyzerPlain Analyzer = "plain"
)

// Defaults for Options.
const (
	// DefaultAnalyzer is the analyzer of a new index.
	DefaultAnalyzer = AnalyzerEnglish
	// DefaultLockTimeout is how long Open waits for another process to
	// release the index before it fails with ErrLocked.
	DefaultLockTimeout = time.Second
	// DefaultPostingsCache is the memory, in bytes, the text search keeps
	// decoded postings in: 32 MiB, about ten million postings (3.1 bytes
	// each on the synthetic stream, page rounding included), those of
	// the words searched most often. Lists of 8 KiB or more are kept
	// outside the Go heap, so the process's anonymous memory grows by
	// what the cache holds, up to its size: every list the scale
	// workload searches at 1M records takes 22 MB (2,368 lists).
	DefaultPostingsCache = 32 << 20
)

// Options configure an Index. A nil *Options means all defaults; zero
// fields take their defaults.
type Options struct {
	// Analyzer is the text analysis of a new index. An existing index must
	// have been built with the same one. Default DefaultAnalyzer.
	Analyzer Analyzer
	// LockTimeout is how long Open waits for the index's file lock.
	// Default DefaultLockTimeout.
	LockTimeout time.Duration
	// AsyncPersist lets Apply return once a batch is searchable, before
	// it is on disk (scorch's unsafe_batch): segments are written by
	// bleve's persister in the background, and DurableWatermark tells how
	// far the disk got. It is for callers that can replay what a crash
	// loses from a log of their own, as the engine does from its change
	// log. Close waits for the persister. Default false: Apply returns
	// once the batch is synced to disk.
	AsyncPersist bool
	// SkipVerify skips the checksum pass over the segment files at Open,
	// which reads the whole index once (10-17 ms measured for 100K short
	// records, 17 MiB). Default false: damaged segments fail Open with
	// ErrCorrupt.
	SkipVerify bool
	// Scoring configures BM25F. Zero fields take the defaults.
	Scoring Scoring
	// ReadOnly opens an existing index for reading only: nothing is
	// written to its directory, Apply fails, and a directory without an
	// index fails Open with ErrCorrupt instead of being created. Default
	// false.
	ReadOnly bool
	// PostingsCache bounds, in bytes, the memory in which the text search
	// keeps the postings it decoded (a word's documents, frequencies and
	// field lengths in one segment, about 3 bytes a posting), so that
	// searching the same words again reads arrays instead of bleve's
	// encoding. The lists kept are those asked for most often. Default
	// DefaultPostingsCache; negative keeps none (every search decodes
	// the postings it reads). Search results do not depend on it.
	PostingsCache int64
	// Analysed, for Memory indexes only, is a cache of document analysis
	// shared by the indexes that hold the same documents (NewAnalysed),
	// so that a document moved between them is analysed once. Default
	// nil: every document added is analysed.
	Analysed *Analysed
}

// withDefaults returns a copy of o with defaults filled in, or an error
// wrapping ErrInvalidOption.
func (o *Options) withDefaults() (Options, error) {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Analyzer == "" {
		c.Analyzer = DefaultAnalyzer
	}
	if c.LockTimeout == 0 {
		c.LockTimeout = DefaultLockTimeout
	}
	switch {
	case c.PostingsCache == 0:
		c.PostingsCache = DefaultPostingsCache
	case c.PostingsCache < 0:
		c.PostingsCache = 0
	}
	switch c.Analyzer {
	case AnalyzerEnglish, AnalyzerEnglishKeepStop, AnalyzerStandard, AnalyzerPlain:
	default:
		return c, fmt.Errorf("%w: unknown analyzer %q", ErrInvalidOption, c.Analyzer)
	}
	sc, err := c.Scoring.withDefaults()
	if err != nil {
		return c, err
	}
	c.Scoring = sc
	if c.LockTimeout < 0 {
		return c, fmt.Errorf("%w: negative lock timeout %v", ErrInvalidOption, c.LockTimeout)
	}
	return c, nil
}
