package static

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/hmo-dev/hmo/engine"
)

var (
	_ engine.Embedder    = (*Static)(nil)
	_ engine.CorpusAware = (*Static)(nil)
)

// Defaults of Options.
const (
	// DefaultStaticA is the SIF smoothing constant a, a probability: the
	// value Arora et al. recommend, and the best on LoCoMo with ProbBlend.
	DefaultStaticA = 1e-3
	// DefaultStaticPriorTokens is the weight of the Zipf prior in the
	// blended word probability, in tokens: a store's own counts dominate
	// once it holds more than about 10,000 tokens (some 500 short records).
	DefaultStaticPriorTokens = 10000
	// DefaultStaticUnknownNorm is the L2 norm of the vector given to a word
	// that is not in the table, in the units of the word vectors (about the
	// norm of the rarest table words, 4.3 to 4.8).
	DefaultStaticUnknownNorm = 4.5
)

// WordProb selects how Static estimates the word probability p(w) of the
// SIF weight a/(a+p(w)).
type WordProb int

const (
	// ProbBlend (the default) blends the store's word counts with the Zipf
	// prior: p(w) = (n(w) + m·prior(w)) / (N + m), with n(w) the count of w
	// in the observed text, N the observed tokens and m = PriorTokens.
	ProbBlend WordProb = iota
	// ProbPrior uses the Zipf prior alone: prior(w) = 1 / ((r+1)·H), with r
	// the word's rank in the source vocabulary and H the harmonic number of
	// its size.
	ProbPrior
	// ProbStore uses the store's word counts alone: p(w) = n(w)/N (0 while
	// the store is empty, which weights every word 1).
	ProbStore
)

// CommonComponent selects the direction that Static removes from every
// sentence vector.
type CommonComponent int

const (
	// CommonPrior (the default) removes a fixed direction derived from the
	// table: the SIF-weighted mean word vector under the Zipf prior,
	// Σ prior(w)·a/(a+prior(w))·v(w), normalised.
	CommonPrior CommonComponent = iota
	// CommonNone removes nothing.
	CommonNone
)

// Unknown selects what Static does with a word that is not in the table.
type Unknown int

const (
	// UnknownHash (the default) gives each unknown word a fixed
	// pseudo-random vector derived from a hash of its text, so that rare
	// names and numbers still match themselves.
	UnknownHash Unknown = iota
	// UnknownSkip ignores unknown words.
	UnknownSkip
)

// Options configures a Static embedder. The zero value gives the
// defaults.
type Options struct {
	// A is the SIF smoothing constant a of the word weight a/(a+p(w)),
	// a probability. Default DefaultStaticA.
	A float64
	// Probabilities selects the word-probability estimate. Default
	// ProbBlend.
	Probabilities WordProb
	// PriorTokens is the weight of the Zipf prior in ProbBlend, in tokens:
	// the prior counts as much as that many observed tokens. Default
	// DefaultStaticPriorTokens.
	PriorTokens float64
	// CommonComponent selects the direction removed from sentence vectors.
	// Default CommonPrior.
	CommonComponent CommonComponent
	// Unknown selects the handling of words not in the table. Default
	// UnknownHash.
	Unknown Unknown
	// UnknownNorm is the L2 norm of an unknown word's vector. Default
	// DefaultStaticUnknownNorm.
	UnknownNorm float64
	// MaxWords limits the vocabulary to the most frequent MaxWords words of
	// the table; the others are unknown. Default 0: the whole table.
	MaxWords int
	// Table is a word-vector table written by tools/embedgen. Default nil:
	// the table embedded in the binary.
	Table []byte
}

// Static is a sentence embedder built from static word vectors with SIF
// weighting (Arora et al., 2017). It implements engine.Embedder and
// engine.CorpusAware.
//
// Static is safe for concurrent use: Embed may run concurrently with
// Observe, Forget and UnmarshalState; a call to Embed sees one consistent
// state for all its texts.
type Static struct {
	opts     Options
	limit    int    // vocabulary size in use
	dims     int    // vector length
	checksum uint32 // CRC-32C of the uncompressed table
	name     string
	scratch  sync.Pool // *scanner

	// ready is closed once the table is decoded; tab, common, empty and
	// err are written before and only read after.
	ready  chan struct{}
	tab    *wordTable
	common []float64 // unit direction removed from every vector, nil for none
	empty  []float32 // the vector of a text without usable words
	err    error     // why the table did not decode, wrapping ErrTable

	mu     sync.RWMutex // guards corpus
	corpus corpus
}

// New returns a Static embedder with an empty corpus. A nil opts
// gives the defaults.
//
// With the embedded table, New returns at once: the table's identity
// (checksum, vocabulary, dimensions) is compiled in, so Name, Dims and
// UnmarshalState answer without it, and a goroutine decodes it (the
// first time in a process: about 40 ms of CPU and 14 MB of heap, kept
// for the life of the process; later embedders share it). Embed,
// Observe, Forget and MarshalState wait for it; Close waits for the
// goroutine. A supplied Options.Table is decoded before New returns, and
// a bad one is an error wrapping ErrTable.
func New(opts *Options) (*Static, error) {
	o, err := fillStaticOptions(opts)
	if err != nil {
		return nil, err
	}
	s := &Static{ready: make(chan struct{})}
	if o.Table == nil {
		s.setIdentity(o, embeddedChecksum, embeddedWords, embeddedDims)
		go func() { s.setTable(loadEmbedded()) }()
		return s, nil
	}
	tab, err := decodeTable(o.Table)
	if err != nil {
		return nil, err
	}
	o.Table = nil // decoded: do not keep the caller's bytes alive
	s.setIdentity(o, tab.checksum, len(tab.ends), tab.dims)
	s.setTable(tab, nil)
	return s, nil
}

// setIdentity sets what Name, Dims and the state encoding need: the
// options and the table's checksum, size and vector length.
func (s *Static) setIdentity(o Options, checksum uint32, words, dims int) {
	s.opts, s.checksum, s.dims, s.limit = o, checksum, dims, words
	if o.MaxWords > 0 && o.MaxWords < s.limit {
		s.limit = o.MaxWords
	}
	s.name = s.makeName()
}

// setTable installs the decoded table, or the error that replaced it,
// and releases the waiters.
func (s *Static) setTable(tab *wordTable, err error) {
	defer close(s.ready)
	if err != nil {
		s.err = err
		return
	}
	s.tab = tab
	s.scratch.New = func() any { return &scanner{tab: tab, limit: s.limit} }
	s.initCommon()
}

// wait blocks until the table is decoded and returns the error that
// replaced it, if any, or ctx's error if ctx ends first.
func (s *Static) wait(ctx context.Context) error {
	select {
	case <-s.ready:
		return s.err
	default:
	}
	select {
	case <-s.ready:
		return s.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close waits for the decoding of the table to end, so that no goroutine
// of s outlives it. It does not release the shared table; s stays
// usable. It always returns nil.
func (s *Static) Close() error {
	<-s.ready
	return nil
}

func fillStaticOptions(opts *Options) (Options, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.A == 0 {
		o.A = DefaultStaticA
	}
	if o.PriorTokens == 0 {
		o.PriorTokens = DefaultStaticPriorTokens
	}
	if o.UnknownNorm == 0 {
		o.UnknownNorm = DefaultStaticUnknownNorm
	}
	switch {
	case !(o.A > 0 && o.A <= 1):
		return o, fmt.Errorf("%w: A %g not in (0, 1]", ErrOptions, o.A)
	case !(o.PriorTokens > 0) || math.IsInf(o.PriorTokens, 0):
		return o, fmt.Errorf("%w: PriorTokens %g not positive", ErrOptions, o.PriorTokens)
	case !(o.UnknownNorm > 0) || math.IsInf(o.UnknownNorm, 0):
		return o, fmt.Errorf("%w: UnknownNorm %g not positive", ErrOptions, o.UnknownNorm)
	case o.MaxWords < 0:
		return o, fmt.Errorf("%w: MaxWords %d negative", ErrOptions, o.MaxWords)
	case o.Probabilities < ProbBlend || o.Probabilities > ProbStore:
		return o, fmt.Errorf("%w: Probabilities %d", ErrOptions, o.Probabilities)
	case o.CommonComponent < CommonPrior || o.CommonComponent > CommonNone:
		return o, fmt.Errorf("%w: CommonComponent %d", ErrOptions, o.CommonComponent)
	case o.Unknown < UnknownHash || o.Unknown > UnknownSkip:
		return o, fmt.Errorf("%w: Unknown %d", ErrOptions, o.Unknown)
	}
	return o, nil
}

// makeName encodes everything that changes the vectors: the table (by
// checksum), the vocabulary size and the options.
func (s *Static) makeName() string {
	o := s.opts
	prob := [...]string{ProbBlend: fmt.Sprintf("blend%g", o.PriorTokens), ProbPrior: "prior", ProbStore: "store"}[o.Probabilities]
	cc := [...]string{CommonPrior: "cc", CommonNone: "nocc"}[o.CommonComponent]
	unk := [...]string{UnknownHash: fmt.Sprintf("hash%g", o.UnknownNorm), UnknownSkip: "skip"}[o.Unknown]
	return fmt.Sprintf("static:wink-sg-100d/v1/%08x/n%d,a%g,%s,%s,%s", s.checksum, s.limit, o.A, prob, cc, unk)
}

// Name identifies the table and every option that changes the vectors,
// e.g. "static:wink-sg-100d/v1/1a2b3c4d/n100000,a0.001,blend10000,cc,hash4.5".
func (s *Static) Name() string { return s.name }

// Dims is the vector length, 100.
func (s *Static) Dims() int { return s.dims }

// Embed returns one unit vector per text. A text with no usable word
// (empty, only punctuation or symbols, or only unknown words under
// UnknownSkip) gets a fixed unit vector documented in the package doc.
// It waits for the table; a table that did not decode is an error
// wrapping ErrTable.
func (s *Static) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return s.embedEach(ctx, len(texts), func(sc *scanner, acc []float64, i int) []float32 {
		return s.embed(sc, texts[i], acc)
	})
}

// embedEach returns one vector for each of n texts, the i-th made by
// vec with a scanner and a scratch accumulator of the embedder's: once
// the table is loaded, under the read lock, ctx checked every 64 texts.
func (s *Static) embedEach(ctx context.Context, n int, vec func(sc *scanner, acc []float64, i int) []float32) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	sc := s.scratch.Get().(*scanner)
	defer s.scratch.Put(sc)
	acc := make([]float64, s.dims)
	out := make([][]float32, n)
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i := range n {
		if i%64 == 63 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = vec(sc, acc, i)
	}
	return out, nil
}
