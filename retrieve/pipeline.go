package retrieve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hmo-dev/hmo/internal/keysort"
	"github.com/hmo-dev/hmo/internal/pair"
)

// ErrInvalidOption is returned by New for options out of range.
var ErrInvalidOption = errors.New("retrieve: invalid option")

// Options configure a Pipeline: which stages run and each stage's own
// options. Zero values mean the defaults.
type Options struct {
	// Stages is the set of switchable stages that run. Default
	// DefaultStages (0 means the default; see ParseStages).
	Stages Stages
	// Fusion configures the fusion stage.
	Fusion FusionOptions
	// Priors weighs the prior stages.
	Priors PriorOptions
	// Expand configures the entity expansion stage.
	Expand ExpandOptions
	// Decompose configures the query decomposition stage.
	Decompose DecomposeOptions
	// HMem weighs H-Mem's temporal relevance and robustness stages.
	HMem HMemOptions
	// HTree configures the temporal-semantic tree stage (htree).
	HTree HTreeOptions
	// Propagation configures the segtree stage.
	Propagation PropagationOptions
	// PRF configures the prf stage.
	PRF PRFOptions
	// Reply configures the reply stage.
	Reply ReplyOptions
	// Cover configures the cover stage.
	Cover CoverOptions
	// Opener configures the opener stage.
	Opener OpenerOptions
}

// Defaults of the stage options.
const (
	DefaultTextWeight = 0.8 // lexical share of linear fusion (BENCHMARKS.md)
	DefaultRRFK       = 60  // reciprocal-rank fusion constant
)

func (o *Options) withDefaults() (Options, error) {
	c := Options{}
	if o != nil {
		c = *o
	}
	if c.Stages == 0 {
		c.Stages = DefaultStages
	}
	if c.Fusion.Method == "" {
		c.Fusion.Method = FusionLinear
	}
	if c.Fusion.TextWeight == 0 {
		c.Fusion.TextWeight = DefaultTextWeight
	}
	if c.Fusion.RRFK == 0 {
		c.Fusion.RRFK = DefaultRRFK
	}
	setDefault(&c.Priors.Speaker, DefaultSpeakerWeight)
	setDefault(&c.Priors.Time, DefaultTimeWeight)
	setDefault(&c.Priors.Session, DefaultSessionWeight)
	setDefaultInt(&c.Expand.Seeds, DefaultExpandSeeds)
	setDefaultInt(&c.Expand.Fanout, DefaultExpandFanout)
	setDefault(&c.Expand.Share, DefaultExpandShare)
	setDefault(&c.Expand.Prior, DefaultEntityWeight)
	setDefaultInt(&c.Decompose.MaxParts, DefaultMaxParts)
	c.HMem.withDefaults()
	setDefault(&c.HTree.Share, DefaultHTreeShare)
	setDefault(&c.HTree.Decay, DefaultHTreeDecay)
	setDefault(&c.Priors.SpeechAct, DefaultSpeechActWeight)
	setDefault(&c.Priors.Context, DefaultContextWeight)
	setDefault(&c.Priors.WordSim, DefaultWordSimWeight)
	setDefault(&c.Priors.Answer, DefaultAnswerWeight)
	setDefault(&c.Propagation.Alpha, DefaultAlpha)
	setDefault(&c.PRF.Weight, DefaultPRFWeight)
	if c.PRF.Docs == 0 {
		c.PRF.Docs = DefaultPRFDocs
	}
	if c.PRF.Terms == 0 {
		c.PRF.Terms = DefaultPRFTerms
	}
	if c.PRF.Postings == 0 {
		c.PRF.Postings = DefaultPRFPostings
	}
	if c.Reply.Roles == nil {
		c.Reply.Roles = DefaultAgentRoles
	}
	setDefaultInt(&c.Cover.PerSession, DefaultCoverPerSession)
	setDefaultInt(&c.Cover.Window, DefaultCoverWindow)
	setDefault(&c.Opener.Weight, DefaultOpenerWeight)
	if c.Propagation.Hops == 0 {
		c.Propagation.Hops = DefaultHops
	}
	switch {
	case !c.Stages.Has(StageText) && !c.Stages.Has(StageVector):
		return c, fmt.Errorf("%w: no candidate generator (text or vector)", ErrInvalidOption)
	case c.Fusion.Method != FusionLinear && c.Fusion.Method != FusionRRF && c.Fusion.Method != FusionScale:
		return c, fmt.Errorf("%w: fusion %q (want linear, scale or rrf)", ErrInvalidOption, c.Fusion.Method)
	case c.Fusion.TextWeight < 0 || c.Fusion.TextWeight > 1:
		return c, fmt.Errorf("%w: text weight %v outside [0, 1]", ErrInvalidOption, c.Fusion.TextWeight)
	case c.Fusion.RRFK < 1:
		return c, fmt.Errorf("%w: rrf k %d below 1", ErrInvalidOption, c.Fusion.RRFK)
	case c.Priors.Speaker < 0 || c.Priors.Time < 0 || c.Priors.Session < 0 || c.Priors.Answer < 0:
		return c, fmt.Errorf("%w: negative prior weight", ErrInvalidOption)
	case c.PRF.Weight < 0 || c.PRF.Weight >= 1 || c.PRF.Docs < 0 || c.PRF.Terms < 0:
		return c, fmt.Errorf("%w: prf %+v", ErrInvalidOption, c.PRF)
	case c.Priors.SpeechAct < 0 || c.Priors.SpeechAct > 1 || c.Priors.Context < 0 || c.Priors.Context > 1:
		return c, fmt.Errorf("%w: speech act or context weight outside [0, 1]", ErrInvalidOption)
	case c.Propagation.Alpha < 0 || c.Propagation.Alpha >= 1 || c.Propagation.Hops < 0 || c.Propagation.Hops > 8:
		return c, fmt.Errorf("%w: propagation alpha %v hops %d (want alpha in [0, 1), hops in [0, 8])", ErrInvalidOption, c.Propagation.Alpha, c.Propagation.Hops)
	case c.Expand.Seeds < 0 || c.Expand.Fanout < 0 || c.Expand.Share < 0 || c.Expand.Share > 1:
		return c, fmt.Errorf("%w: expansion seeds, fan-out or share out of range", ErrInvalidOption)
	case c.Cover.PerSession < 0 || c.Cover.Window < 0:
		return c, fmt.Errorf("%w: cover per session %d window %d (want positive)", ErrInvalidOption, c.Cover.PerSession, c.Cover.Window)
	case c.Opener.Weight < 0 || c.Opener.Weight > 1:
		return c, fmt.Errorf("%w: opener weight %v outside [0, 1]", ErrInvalidOption, c.Opener.Weight)
	case c.Decompose.MaxParts < 0 || c.Decompose.MaxParts > MaxDecomposeParts:
		return c, fmt.Errorf("%w: decomposition parts %d outside [1, %d]", ErrInvalidOption, c.Decompose.MaxParts, MaxDecomposeParts)
	}
	if c.HTree.Share < 0 || c.HTree.Share > 1 || c.HTree.Decay < 0 || c.HTree.Decay > 1 {
		return c, fmt.Errorf("%w: tree share or decay outside [0, 1]", ErrInvalidOption)
	}
	if err := c.HMem.validate(); err != nil {
		return c, err
	}
	return c, nil
}

// Pipeline is the query path. It holds only its options: it is safe for
// concurrent use.
type Pipeline struct {
	o     Options
	parts atomic.Pointer[partsMemo] // the last question Parts split (decompose.go)
}

// New returns a pipeline with options o (nil means defaults).
func New(o *Options) (*Pipeline, error) {
	c, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Pipeline{o: c}, nil
}

// Stages is the set of stages the pipeline runs.
func (p *Pipeline) Stages() Stages { return p.o.Stages }

// Run is the whole query path: candidates from the generators, fusion,
// the priors, propagation, and selection. It returns every candidate,
// best first (ties: higher id first); the caller keeps the first q.K that
// still exist.
func (p *Pipeline) Run(ctx context.Context, q *Query, src Source) ([]Candidate, error) {
	return p.RunBeside(ctx, q, src, nil)
}

// RunBeside is Run, and calls beside, when not nil, with the ids of the
// final list, best first, once the list is selected: on a goroutine of
// its own while the results' soft match is worked out (a source with a
// Lexicon), on the calling goroutine otherwise. RunBeside returns once
// beside has. The caller reads the results' records there, while the
// soft match runs: the list it is given is the one Run returns.
func (p *Pipeline) RunBeside(ctx context.Context, q *Query, src Source, beside func(ids []uint64)) ([]Candidate, error) {
	// 0. Decomposition: a multi-part question runs the path once per part
	// and once whole; the lists are merged.
	parts := p.Parts(q.Text)
	var cands []Candidate
	var err error
	if len(parts) > 1 {
		cands, err = p.runParts(ctx, q, parts, src)
	} else {
		cands, err = p.run(ctx, q, src)
	}
	if err != nil {
		return nil, err
	}
	// 5a. The prior of the turns that open the sessions, for a question
	// asking for a set, on the whole question's list.
	if p.o.Stages.Has(StageOpener) {
		if err := openerPrior(p.o.Opener.Weight, q, cands, src); err != nil {
			return nil, err
		}
	}
	// 5b. Selection that covers occasions, for a question asking for a
	// set, on the whole question's list.
	if p.o.Stages.Has(StageCover) {
		if err := coverSessions(&p.o.Cover, q, cands, src); err != nil {
			return nil, err
		}
	}
	// 6. Order: an agent's echo of the user's turn goes right below
	// that turn, on the whole question's final list.
	if p.o.Stages.Has(StageReply) {
		if err := replyOrder(&p.o.Reply, q, cands, src); err != nil {
			return nil, err
		}
		selectBest(cands)
	}
	lex, soft := src.(Lexicon)
	if beside != nil {
		ids := make([]uint64, len(cands))
		for i := range cands {
			ids[i] = cands[i].ID
		}
		if !soft {
			beside(ids)
			return cands, nil
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			beside(ids)
		}()
		defer func() { <-done }()
	}
	// The soft match of the results' calibrated relevance.
	if soft {
		if err := calibrateSoft(q, cands, lex); err != nil {
			return nil, err
		}
	}
	return cands, nil
}

// Parts returns the parts a question is run as, when the decomposition
// stage splits it; nil when the whole question alone is run.
func (p *Pipeline) Parts(text string) []string {
	if !p.o.Stages.Has(StageDecompose) {
		return nil
	}
	return p.split(text)
}

// run is the query path of one question.
func (p *Pipeline) run(ctx context.Context, q *Query, src Source) ([]Candidate, error) {
	// 1. Candidate generation.
	text, vec, err := p.candidates(ctx, q, src)
	if err != nil {
		return nil, err
	}
	// 2. Fusion, 3. the priors.
	cands, err := p.rank(q, src, text, vec)
	if err != nil {
		return nil, err
	}
	// 4. Propagation over the segment tree.
	if ts, ok := src.(TreeSource); ok && p.o.Stages.Has(StageSegTree) && len(cands) > 0 {
		ids := make([]uint64, len(cands))
		for i := range cands {
			ids[i] = cands[i].ID
		}
		f, err := ts.Segments(ids, p.o.Propagation.Hops)
		if err != nil {
			return nil, err
		}
		cands = propagate(&p.o.Propagation, cands, f)
	}
	// H-Mem's temporal relevance and robustness, shares of the best
	// fused score.
	if p.o.Stages&(StageTemporal|StageRobust) != 0 {
		if err := p.hmemScores(q, cands, src); err != nil {
			return nil, err
		}
	}
	if sp, ok := src.(Specifier); ok && p.o.Stages.Has(StageEntityPrior) {
		if err := entityPrior(cands, sp, p.o.Expand.Prior, bestFused(cands)); err != nil {
			return nil, err
		}
	}
	// The answer prior: for a question asking for a thing, records naming
	// a specific entity it does not name.
	if en, ok := src.(EntityNamer); ok && p.o.Stages.Has(StageAnswer) {
		if err := answerPrior(q, cands, src, en, p.o.Priors.Answer, bestFused(cands)); err != nil {
			return nil, err
		}
	}
	// Propagation over H-Mem's temporal-semantic tree, then multi-hop
	// expansion through shared entities.
	if ts, ok := src.(HTreeSource); ok && p.o.Stages.Has(StageTree) {
		if err := htreePropagate(&p.o.HTree, cands, ts); err != nil {
			return nil, err
		}
	}
	if l, ok := src.(Linker); ok && p.o.Stages.Has(StageEntity) {
		if cands, err = expandEntities(&p.o.Expand, cands, l); err != nil {
			return nil, err
		}
	}
	// Calibrated relevance, beside the rank score.
	if err := calibrate(q, cands, src); err != nil {
		return nil, err
	}
	// 5. Selection.
	selectBest(cands)
	return cands, nil
}

// priorStages are the stages rank reads every candidate's Doc for.
const priorStages = StageSpeaker | StageTime | StageSession | StageWordSim | StageSpeechAct | StageContext

// rank fuses the generators' lists and applies the priors, each a share
// of the best fused score.
func (p *Pipeline) rank(q *Query, src Source, text, vec []Hit) ([]Candidate, error) {
	cands := fuse(&p.o.Fusion, text, vec, p.o.Stages.Has(StageText), p.o.Stages.Has(StageVector) && q.Vector != nil)
	if p.o.Stages&priorStages == 0 {
		return cands, nil
	}
	if err := loadDocs(cands, src); err != nil {
		return nil, err
	}
	when := p.o.Stages.Has(StageTime) && q.isWhenQuestion() // the time prior's "when ..." question
	if p.readsMentions(q, when) {
		deriveMentions(cands)
	}
	scale := bestFused(cands)
	if p.o.Stages.Has(StageSpeaker) {
		speakerPrior(q, cands, p.o.Priors.Speaker, scale)
	}
	if p.o.Stages.Has(StageTime) {
		timePrior(q, cands, when, p.o.Priors.Time, scale)
	}
	if lex, ok := src.(Lexicon); ok && p.o.Stages.Has(StageWordSim) {
		if err := wordSimPrior(q, cands, lex, p.o.Priors.WordSim, scale); err != nil {
			return nil, err
		}
	}
	if p.o.Stages.Has(StageSession) && !p.skipsSessionPrior(q) {
		sessionPrior(cands, p.o.Priors.Session)
	}
	var err error
	if p.o.Stages.Has(StageContext) {
		if cands, err = contextPrior(q, cands, src, p.o.Priors.Context); err != nil {
			return nil, err
		}
	}
	if p.o.Stages.Has(StageSpeechAct) {
		if cands, err = speechActPrior(q, cands, src, p.o.Priors.SpeechAct); err != nil {
			return nil, err
		}
	}
	return cands, nil
}

// readsMentions reports whether the ranking of q reads every
// candidate's time expressions (Doc.mentions): the time prior, for a
// question asking when (when: the time stage runs and IsWhenQuestion)
// or naming a time, and H-Mem's temporal relevance, for one naming a
// time.
func (p *Pipeline) readsMentions(q *Query, when bool) bool {
	named := len(q.resolvedMentions()) > 0
	return p.o.Stages.Has(StageTime) && (named || when) || p.o.Stages.Has(StageTemporal) && named
}

// parallelMentions is the number of candidates whose time expressions
// are still to be derived from which deriveMentions derives them on two
// goroutines.
const parallelMentions = 32

// deriveMentions derives the time expressions of the candidates'
// analysed docs (Doc.mentions, kept with the doc) that are still to be
// derived, for the priors to read: from parallelMentions of them on, the
// calling goroutine and one more each take the next that neither has
// taken, so that the second takes a share only when it runs, on a core
// the ranking leaves idle (when none is free it starts once the caller
// waits for it, and finds none left); fewer are left to the priors, on
// the calling goroutine. Each is derived once (sync.Once): the priors
// read the same expressions in the same order as without it.
func deriveMentions(cands []Candidate) {
	var todo []*Doc
	for i := range cands {
		if d := cands[i].doc; d != nil && d.analysed && !d.lazy.spansDone.Load() {
			todo = append(todo, d)
		}
	}
	if len(todo) < parallelMentions {
		return
	}
	var next atomic.Int64
	derive := func() {
		for {
			i := next.Add(1) - 1
			if i >= int64(len(todo)) {
				return
			}
			todo[i].mentions()
		}
	}
	pair.Run(derive)
}

// vectorCandidates returns up to c vector candidates of q. The runs of a
// decomposed question share the whole question's vector, and the first
// run's answer (q.vec) serves the others.
func (p *Pipeline) vectorCandidates(ctx context.Context, q *Query, src Source, c int) ([]Hit, error) {
	if q.vec != nil && q.vec.done {
		return slices.Clone(q.vec.hits), nil // prefetched by the first run
	}
	vec, err := src.Vector(ctx, q, c)
	if err != nil {
		return nil, err
	}
	if q.vec != nil {
		q.vec.done, q.vec.hits = true, slices.Clone(vec)
	}
	// Every vector candidate is a candidate of the priors: read their
	// metadata while the lexical search runs.
	if pf, ok := src.(Prefetcher); ok && len(vec) > 0 && p.o.Stages&priorStages != 0 {
		ids := make([]uint64, len(vec))
		for i, h := range vec {
			ids[i] = h.ID
		}
		pf.Prefetch(ids)
	}
	return vec, nil
}

// candidates runs the enabled generators, the lexical one, with its
// feedback search, alongside the vector one.
func (p *Pipeline) candidates(ctx context.Context, q *Query, src Source) (text, vec []Hit, err error) {
	c := max(q.Candidates, q.K)
	var textErr, vecErr error
	lexical := func() {
		text, textErr = src.Text(ctx, q, c)
		// Pseudo-relevance feedback: a second lexical search with the
		// words of the best first-pass records, mixed into the first.
		// It needs only the first pass: it runs while the vector
		// candidates are still being found.
		if textErr == nil && p.o.Stages.Has(StagePRF) && len(text) > 0 {
			text, textErr = expand(ctx, &p.o.PRF, q, src, text, c)
		}
	}
	wantVec := p.o.Stages.Has(StageVector) && q.Vector != nil
	if pc, ok := src.(Precomputed); ok && pc.PrecomputedVector() {
		// Nothing to overlap: no goroutine to start and wait for.
		if wantVec {
			vec, vecErr = p.vectorCandidates(ctx, q, src, c)
		}
		if p.o.Stages.Has(StageText) {
			lexical()
		}
		if err := errors.Join(textErr, vecErr); err != nil {
			return nil, nil, err
		}
		return text, vec, nil
	}
	var wg sync.WaitGroup
	if p.o.Stages.Has(StageText) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lexical()
		}()
	}
	if wantVec {
		vec, vecErr = p.vectorCandidates(ctx, q, src, c)
	}
	wg.Wait()
	if err := errors.Join(textErr, vecErr); err != nil {
		return nil, nil, err
	}
	return text, vec, nil
}

// selectBest orders candidates best first; equal scores put the higher
// (newer) id first.
func selectBest(c []Candidate) {
	// slices.SortFunc runs sort.Slice's algorithm (both are generated
	// from one template) without reflection; cmp is the order "less"
	// gives, so even a NaN score sorts as it did with sort.Slice.
	// It sorts the candidates' places rather than the candidates (88
	// bytes each, copied for every comparison and swap): the algorithm
	// compares and swaps places exactly as it would the candidates they
	// name, so the order it leaves is the same, then applied in place.
	if len(c) < 2 {
		return
	}
	// On keys of the score and the id (complemented: the higher id
	// first): candidates' ids are distinct, so are the keys, and any
	// sort leaves the order above. NaN, and a repeated id, take the sort
	// by betterCand.
	if keysort.SortDescending(c, func(i int) (float64, uint64) { return c[i].Score, ^c[i].ID }) {
		return
	}
	// The fallback sorts the candidates' places (keysort.Key.At) with
	// slices.SortFunc, then applies them in place.
	perm := make([]keysort.Key, len(c))
	for i := range c {
		perm[i].At = int32(i)
	}
	slices.SortFunc(perm, func(i, j keysort.Key) int {
		a, b := &c[i.At], &c[j.At]
		switch {
		case betterCand(a, b):
			return -1
		case betterCand(b, a):
			return 1
		}
		return 0
	})
	keysort.Apply(c, perm)
}

// betterCand is selectBest's order: a higher score, then a higher id.
func betterCand(a, b *Candidate) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID > b.ID
}

// loadDocs attaches each candidate's metadata.
func loadDocs(cands []Candidate, src Source) error {
	ids := make([]uint64, len(cands))
	for i := range cands {
		ids[i] = cands[i].ID
	}
	if dk, ok := src.(DocKeeper); ok {
		return keptDocs(cands, ids, dk)
	}
	docs, err := src.Docs(ids)
	if err != nil {
		return err
	}
	if len(docs) != len(ids) {
		return fmt.Errorf("retrieve: source returned %d docs for %d ids", len(docs), len(ids))
	}
	for i := range cands {
		if docs[i].ID == cands[i].ID {
			cands[i].doc = &docs[i]
		}
	}
	return nil
}

func bestFused(cands []Candidate) float64 {
	var b float64
	for i := range cands {
		b = max(b, cands[i].Fused)
	}
	return b
}

func setDefaultInt(v *int, def int) {
	if *v == 0 {
		*v = def
	}
}

func setDefault(v *float64, def float64) {
	if *v == 0 {
		*v = def
	}
}
