package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/hmo-dev/hmo/persona"
	"github.com/hmo-dev/hmo/retrieve"
	"github.com/hmo-dev/hmo/segtree"
	"github.com/hmo-dev/hmo/tiers"
	"github.com/hmo-dev/hmo/xmemory"
)

// Defaults for Options. Sizes are in bytes unless stated.
const (
	DefaultCompressAbove  = 512     // raw text longer than this is stored zstd-compressed
	DefaultMaxTextBytes   = 1 << 16 // 64 KiB per record
	DefaultMaxLabelBytes  = 256     // scope, session and role
	DefaultIndexContext   = 1       // previous turns of the same session indexed with a record
	DefaultFusion         = FusionLinear
	DefaultTextWeight     = retrieve.DefaultTextWeight // weight of the normalised BM25 score in linear fusion (see BENCHMARKS.md)
	DefaultRRFK           = retrieve.DefaultRRFK       // reciprocal-rank fusion constant
	DefaultCandidates     = 100                        // candidates drawn from each index per query (at least k): the pool the priors rerank
	DefaultK              = 10                         // results per query when the query says 0
	DefaultMaxK           = 1000
	DefaultImportance     = 5.0              // I0 on the 1-10 scale when no scorer is configured
	DefaultCheckpointLog  = 8192             // change-log entries after which indexes are saved and the log trimmed
	DefaultMode           = ModeTiered       // the HMO tier walk; flat searches the whole archive every time
	DefaultMinCoverage    = 1.0              // lexical coverage of the query by a tier's best hit that makes its result sufficient (ScoreTest)
	DefaultMaxMatches     = 1                // results that may reach that coverage, and tier records that may hold every term: more means the query is ambiguous in the tier (ScoreTest)
	DefaultFlushAccesses  = 512              // dirty access headers kept in memory before they are written
	DefaultEnrichTimeout  = 60 * time.Second // bound on the language-model steps of one record
	DefaultSummarizeAbove = 1024             // raw text longer than this, in bytes, gets a compressed representation when an Enricher is set
	DefaultSummarizeLines = 12               // text of at least this many lines (code, lists) counts as complex
	DefaultSummaryRunes   = 400              // length of the extractive fallback summary in runes
)

// Mode selects how Recall searches.
type Mode string

// Recall modes.
const (
	ModeTiered Mode = "tiered" // HMO walk: Tier 1, then 2, then the archive, stopping when sufficient
	ModeFlat   Mode = "flat"   // exhaustive hybrid search of the archive
)

// Fusion names how lexical and vector results are combined.
type Fusion = retrieve.Fusion

// Fusion methods.
const (
	FusionLinear = retrieve.FusionLinear // min-max normalised scores, weighted sum
	FusionRRF    = retrieve.FusionRRF    // reciprocal-rank fusion
	FusionScale  = retrieve.FusionScale  // BM25 divided by its maximum, cosine as is, weighted sum
)

// Options configure an Engine. A nil *Options is not enough on its own:
// Embedder, OpenVectorIndex and OpenTextIndex are required (the hmo
// package wires the embedded defaults). Zero values mean the defaults.
type Options struct {
	// Embedder turns text into vectors. Required.
	Embedder Embedder
	// OpenVectorIndex opens (or creates) the vector index in dir for
	// vectors of dims dimensions. Required.
	OpenVectorIndex func(dir string, dims int) (VectorIndex, error)
	// OpenTextIndex opens (or creates) the full-text index in dir. Required.
	OpenTextIndex func(dir string) (TextIndex, error)
	// Importance scores a record's initial importance I0 on [1, 10].
	// Default: nil, every record gets DefaultImportance.
	Importance ImportanceScorer
	// Clock gives the current time. Default time.Now.
	Clock func() time.Time

	// CompressAbove is the raw-text size in bytes above which text is
	// stored zstd-compressed. Default DefaultCompressAbove.
	CompressAbove int
	// MaxTextBytes is the largest accepted text in bytes. Default DefaultMaxTextBytes.
	MaxTextBytes int
	// IndexContext is how many previous turns of the same session are
	// indexed together with a record (text and vector). Fixed when the
	// store is created. Default DefaultIndexContext; -1 means none.
	IndexContext int
	// StandaloneRoles are the roles of derived records (facts distilled
	// from a turn, session summaries): they are indexed without the
	// turns before them and are never indexed as another record's
	// context, since they are not turns of the conversation. Default
	// DefaultStandaloneRoles; an empty non-nil slice means none.
	StandaloneRoles []string
	// NoIndexRole leaves the role (speaker) out of the indexed text. By
	// default each indexed turn reads "role: text", so a query naming a
	// speaker matches what that speaker said. Fixed when the store is
	// created. Default false.
	NoIndexRole bool
	// Fusion combines the lexical and vector rankings. Default DefaultFusion.
	Fusion Fusion
	// TextWeight is the weight of the BM25 side in linear fusion, in [0, 1].
	// Default DefaultTextWeight; set NoText or NoVector to use one side only.
	TextWeight float64
	// RRFK is the reciprocal-rank fusion constant. Default DefaultRRFK.
	RRFK int
	// Candidates is how many candidates each index returns per query
	// before fusion (raised to k when k is larger). Default DefaultCandidates.
	Candidates int
	// NoText and NoVector switch one side of hybrid recall off (for
	// evaluation); they remove the text or vector stage from Stages.
	// Default false.
	NoText, NoVector bool
	// Stages switches the stages of the retrieval pipeline on and off,
	// as retrieve.ParseStages reads it: "-segtree" is the default without
	// the segment tree, "none,text,speaker" exactly those stages.
	// Default "" (retrieve.DefaultStages).
	Stages string
	// Priors weighs the pipeline's prior stages (speaker, time,
	// session). Zero fields take the retrieve package defaults.
	Priors retrieve.PriorOptions
	// Expand, Decompose, HMem and Tree configure the pipeline's H-Mem
	// stages: multi-hop expansion through the entity graph, query
	// decomposition, temporal relevance and robustness, propagation over
	// the temporal-semantic tree. Zero fields take the retrieve package
	// defaults.
	Expand    retrieve.ExpandOptions
	Decompose retrieve.DecomposeOptions
	HMem      retrieve.HMemOptions
	HTree     retrieve.HTreeOptions
	// SegTree shapes the segment tree kept for every scope (SegTreeMem);
	// zero fields take the segtree package defaults. A store built with
	// other values is rebuilt on Open.
	SegTree segtree.Options
	// Themes shapes xMemory's theme partition of each scope (Engine.Themes);
	// zero values mean the xmemory package defaults (12 facts a theme).
	// A store built with other values is rebuilt on Open.
	Themes xmemory.Options
	// ThemesMaxRecords is the most records of a scope that xMemory's
	// themes are kept for: each record's add costs O(themes), paid at
	// ingest (about 25 µs a record at LoCoMo's size, 110 µs near 10,000
	// records). A scope that grows past it has its themes dropped (Engine.Themes
	// reports 0) and memory_context selects among its records alone.
	// Default DefaultThemesMaxRecords records; negative means no limit.
	ThemesMaxRecords int
	// Propagation configures relevance propagation over the segment
	// tree (the segtree stage). Zero fields take the retrieve defaults.
	Propagation retrieve.PropagationOptions
	// PRF configures pseudo-relevance feedback (the prf stage). Zero
	// fields take the retrieve defaults.
	PRF retrieve.PRFOptions
	// Cover configures the cover stage's selection for questions asking
	// for a set (turns of one session among the first results). Zero
	// fields take the retrieve defaults.
	Cover retrieve.CoverOptions
	// Opener weighs the opener stage's prior for questions asking for a
	// set (the turn that opens each session). Zero fields take the
	// retrieve defaults.
	Opener retrieve.OpenerOptions
	// CheckpointLog is the number of change-log entries after which the
	// indexes are saved and the log trimmed. Default DefaultCheckpointLog.
	CheckpointLog int
	// OpenTimeout bounds the wait for the store's file lock. Default 1s.
	OpenTimeout time.Duration
	// Create says whether Open may create a store where dir holds none.
	// Default CreateAlways.
	Create CreatePolicy
	// ReadOnly opens the store for reading only (a shared lock): Open
	// writes nothing, indexes are brought up to date in memory where
	// they can be (a text index that cannot be written is used as it
	// is), Close saves nothing, and writes fail with ErrReadOnly. It
	// never creates a store. Default false.
	ReadOnly bool
	// ShortLived says the process holds the store for one command and
	// exits (a CLI command): the vector index starts no build in the
	// background (its partition, missing or stale), which Close would
	// stop before it ends after it took CPU and memory from the
	// command's searches. Its searches scan every row until FinishBuilds,
	// or an open without it (the daemon), builds the partition. Read by
	// the default vector index's opener (hmo.OpenWith); an
	// OpenVectorIndex of the caller's own ignores it. Default false.
	ShortLived bool

	// Mode is how Recall searches. Default DefaultMode.
	Mode Mode
	// NewTierTextIndex creates the in-memory lexical index of a tier view
	// (Tier 1 and Tier 2 each get one). Required in tiered mode.
	NewTierTextIndex func() (TextIndex, error)
	// Tiers sizes the tiers and sets the priority constants (Eq. 5).
	// Zero fields take the tiers package defaults.
	Tiers tiers.Options
	// Persona configures the persona vector, profile and drift gate.
	// Dims is set from the embedder. Zero fields take the persona
	// package defaults.
	Persona persona.Options
	// Sufficiency decides whether a tier's results answer the query.
	// Default: ScoreTest{MinCoverage: DefaultMinCoverage}.
	Sufficiency Sufficiency
	// FlushAccesses is how many accessed headers (n, t_last, P, tier) are
	// kept in memory before they are written to bbolt; they are also
	// written by every Remember, Forget and Close. Default DefaultFlushAccesses.
	FlushAccesses int

	// Enricher runs the language-model steps of ingestion (importance,
	// compression) and the persona profile refresh. Default nil: no
	// enrichment queue, the embedded defaults only. Records are committed
	// first; a worker owned by the engine enriches them afterwards.
	Enricher Enricher
	// EnrichTimeout bounds the language-model steps of one record.
	// Default DefaultEnrichTimeout.
	EnrichTimeout time.Duration
	// Summarize is the fallback for compression when the Enricher fails:
	// a summary of at most maxRunes runes. Default: none (no summary).
	Summarize func(text string, maxRunes int) string
	// SummarizeAbove is the raw-text size in bytes above which a record
	// gets a compressed representation (HMO Eq. 2); text of at least
	// DefaultSummarizeLines lines counts as complex and gets one too.
	// Default DefaultSummarizeAbove.
	SummarizeAbove int
}

// CreatePolicy says when Open may create a store.
type CreatePolicy int

// Create policies.
const (
	// CreateAlways creates a store where dir holds none (the directory
	// too). The default.
	CreateAlways CreatePolicy = iota
	// CreateNever fails with ErrNoStore where dir holds no store.
	CreateNever
	// CreateIfNew creates a store unless the directory holds a store's
	// indexes (text, vectors) without its store file: a store whose file
	// was deleted or moved is refused with ErrNoStore rather than
	// silently started afresh. A directory that does not exist, or holds
	// only other files (a daemon's log), gets a new store.
	CreateIfNew
)

// ImportanceScorer assigns the initial importance I0 in [1, 10] to a record.
// The engine calls it from one goroutine at a time, under its write lock,
// though not always the caller's: RememberBatches scores a batch's
// inputs (duplicates included) in a goroutine of its own while the
// previous batch commits.
type ImportanceScorer interface {
	Importance(text string) float64
}

func (o *Options) withDefaults() (*Options, error) {
	c := Options{}
	if o != nil {
		c = *o
	}
	if c.Embedder == nil || c.OpenVectorIndex == nil || c.OpenTextIndex == nil {
		return nil, fmt.Errorf("%w: Embedder, OpenVectorIndex and OpenTextIndex are required", ErrInvalidOption)
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	setDefault(&c.CompressAbove, DefaultCompressAbove)
	setDefault(&c.MaxTextBytes, DefaultMaxTextBytes)
	setDefault(&c.IndexContext, DefaultIndexContext)
	if c.StandaloneRoles == nil {
		c.StandaloneRoles = DefaultStandaloneRoles
	}
	setDefault(&c.RRFK, DefaultRRFK)
	setDefault(&c.Candidates, DefaultCandidates)
	setDefault(&c.CheckpointLog, DefaultCheckpointLog)
	if c.Fusion == "" {
		c.Fusion = DefaultFusion
	}
	if c.TextWeight == 0 {
		c.TextWeight = DefaultTextWeight
	}
	if c.OpenTimeout == 0 {
		c.OpenTimeout = time.Second
	}
	if c.Mode == "" {
		c.Mode = DefaultMode
	}
	if c.Sufficiency == nil {
		c.Sufficiency = ScoreTest{MinCoverage: DefaultMinCoverage}
	}
	setDefault(&c.FlushAccesses, DefaultFlushAccesses)
	setDefault(&c.SummarizeAbove, DefaultSummarizeAbove)
	if c.EnrichTimeout == 0 {
		c.EnrichTimeout = DefaultEnrichTimeout
	}
	c.Persona.Dims = c.Embedder.Dims()
	if _, err := c.SegTree.WithDefaults(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOption, err)
	}
	if c.ThemesMaxRecords == 0 {
		c.ThemesMaxRecords = DefaultThemesMaxRecords
	}
	if _, err := c.Themes.WithDefaults(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOption, err)
	}
	return &c, c.validate()
}

// pipeline builds the retrieval pipeline the options describe.
func (c *Options) pipeline() (*retrieve.Pipeline, error) {
	st, err := retrieve.ParseStages(c.Stages)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOption, err)
	}
	if c.NoText {
		st &^= retrieve.StageText
	}
	if c.NoVector {
		st &^= retrieve.StageVector
	}
	p, err := retrieve.New(&retrieve.Options{
		Stages:      st,
		Fusion:      retrieve.FusionOptions{Method: c.Fusion, TextWeight: c.TextWeight, RRFK: c.RRFK},
		Priors:      c.Priors,
		Propagation: c.Propagation,
		PRF:         c.PRF,
		Cover:       c.Cover,
		Opener:      c.Opener,
		Expand:      c.Expand,
		Decompose:   c.Decompose,
		HMem:        c.HMem,
		HTree:       c.HTree,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOption, err)
	}
	return p, nil
}

func (c *Options) validate() error {
	switch {
	case c.Fusion != FusionLinear && c.Fusion != FusionRRF && c.Fusion != FusionScale:
		return fmt.Errorf("%w: fusion %q (want linear, scale or rrf)", ErrInvalidOption, c.Fusion)
	case c.TextWeight < 0 || c.TextWeight > 1:
		return fmt.Errorf("%w: text weight %v outside [0, 1]", ErrInvalidOption, c.TextWeight)
	case c.Mode != ModeTiered && c.Mode != ModeFlat:
		return fmt.Errorf("%w: mode %q (want tiered or flat)", ErrInvalidOption, c.Mode)
	case c.Mode == ModeTiered && c.NewTierTextIndex == nil:
		return fmt.Errorf("%w: tiered mode needs NewTierTextIndex", ErrInvalidOption)
	case c.NoText && c.NoVector:
		return fmt.Errorf("%w: NoText and NoVector together leave nothing to search", ErrInvalidOption)
	case c.IndexContext < -1 || c.IndexContext > 8:
		return fmt.Errorf("%w: index context %d outside [-1, 8]", ErrInvalidOption, c.IndexContext)
	case c.CompressAbove < 0 || c.MaxTextBytes < 1 || c.RRFK < 1 || c.Candidates < 1 || c.CheckpointLog < 1:
		return fmt.Errorf("%w: sizes must be positive", ErrInvalidOption)
	}
	if c.Embedder.Dims() < 1 {
		return fmt.Errorf("%w: embedder %q reports %d dimensions", ErrInvalidOption, c.Embedder.Name(), c.Embedder.Dims())
	}
	return nil
}

func setDefault(v *int, def int) {
	if *v == 0 {
		*v = def
	}
}

// DefaultThemesMaxRecords is the default of Options.ThemesMaxRecords.
const DefaultThemesMaxRecords = 10000

// DefaultStandaloneRoles are the roles package capture gives distilled
// facts and session summaries.
var DefaultStandaloneRoles = []string{"fact", "summary"}

// standalone reports whether r is a derived record (StandaloneRoles).
func (c *Options) standalone(r *Record) bool {
	return r.Role != "" && slices.Contains(c.StandaloneRoles, r.Role)
}

// contextTurns is IndexContext with -1 mapped to 0.
func (c *Options) contextTurns() int { return max(c.IndexContext, 0) }

// indexLayout describes what is indexed for a record; a store keeps the
// layout it was created with.
func (c *Options) indexLayout() string {
	return fmt.Sprintf("context=%d role=%t", c.contextTurns(), !c.NoIndexRole)
}
