package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

// Opener opens a fresh store in dir whose engine reads the time from clock.
type Opener func(dir string, clock func() time.Time) (*engine.Engine, error)

// Clock is a replay clock: it says what time it is in the data being
// replayed, so decay and recency behave as they would have live. Safe for
// concurrent use.
type Clock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

// Now returns the replayed time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the replayed time to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Options configure a run.
type Options struct {
	// WorkDir holds the temporary stores, one per conversation or
	// haystack, removed afterwards. Default os.TempDir().
	WorkDir string
	// Progress, when set, is called after each conversation or haystack.
	Progress func(done, total int)
	// ContextBudget, when positive, also measures memory_context blocks
	// of that many tokens for every question (Report.Context) and
	// HyMem's paths at that budget (Report.HyMem).
	ContextBudget int
	// ContextMinScore is the blocks' relevance floor (api.ContextRequest
	// MinScore: 0 the default floor, negative none).
	ContextMinScore float64
	// HyMemSufficiency judges HyMem's light path; nil means the engine's
	// Options.Sufficiency.
	HyMemSufficiency engine.Sufficiency
}

// QuestionResult is one question's outcome. Reports keep them so that a
// later run can be compared with this one question by question.
type QuestionResult struct {
	ID        string             `json:"id"`
	Category  string             `json:"category"`
	Metrics   map[string]float64 `json:"metrics"` // by metric name; a metric the question does not define is absent
	LatencyMS float64            `json:"latency_ms"`
}

// Report is the outcome of a run.
type Report struct {
	Benchmark string `json:"benchmark"` // "locomo" or "longmemeval"
	// Conversations counts the stores built: LoCoMo conversations, or
	// LongMemEval questions (each has its own haystack).
	Conversations   int                 `json:"conversations"`
	Records         int                 `json:"records"`
	Skipped         int                 `json:"skipped_no_evidence"` // questions left out: no resolvable evidence, adversarial or abstention
	Overall         Metrics             `json:"overall"`
	ByCategory      map[string]*Metrics `json:"by_category"`
	MedianLatencyMS float64             `json:"median_latency_ms"`
	P99LatencyMS    float64             `json:"p99_latency_ms"`
	ImportanceAUC   float64             `json:"importance_auc"`    // ROC-AUC of I0 separating evidence turns from the rest
	Tiers           *TierReport         `json:"tiers,omitempty"`   // tiered mode only
	Context         *ContextReport      `json:"context,omitempty"` // with Options.ContextBudget
	HyMem           *HyMemReport        `json:"hymem,omitempty"`   // with Options.ContextBudget
	IngestSeconds   float64             `json:"ingest_seconds"`
	QuestionsPerSec float64             `json:"questions_per_second"`
	// Questions are the per-question results, in the order asked.
	Questions []*QuestionResult `json:"questions"`
	// Comparison is filled in by the caller that compares this run with a
	// baseline (Compare); it is not read back.
	Comparison *Comparison `json:"comparison,omitempty"`
	latencies  []time.Duration
	importance []float64 // I0 of every turn
	evidence   []bool    // whether that turn is cited as evidence
}

// haystack is one store's worth of a benchmark: what to remember, in
// order, and what to ask.
type haystack struct {
	scope     string
	batches   []batch
	evidence  map[string]bool // turn ids cited as evidence, for the importance AUC
	questions []probe
	skipped   int
}

// batch is one session's records; the replay clock reads end while they
// are remembered.
type batch struct {
	inputs []engine.Input
	end    time.Time
}

// probe is one question to ask.
type probe struct {
	id, category, text string
	at                 time.Time // the replay clock when asked; zero leaves it after the last session
	ev                 Evidence
}

// run builds one store per haystack, remembers its sessions, asks its
// questions and fills the report.
func run(ctx context.Context, benchmark string, n int, next func(i int) haystack, open Opener, o Options) (*Report, error) {
	work, err := os.MkdirTemp(o.WorkDir, "hmo-eval-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	rep := &Report{Benchmark: benchmark, Conversations: n}
	if o.ContextBudget > 0 {
		rep.Context = newContextReport(o.ContextBudget, o.ContextMinScore)
		rep.HyMem = &HyMemReport{suff: o.HyMemSufficiency}
	}
	var ingest time.Duration
	for i := range n {
		h := next(i)
		d, err := rep.haystack(ctx, h, filepath.Join(work, strconv.Itoa(i)), open)
		if err != nil {
			return nil, fmt.Errorf("eval: %s: %w", h.scope, err)
		}
		ingest += d
		if o.Progress != nil {
			o.Progress(i+1, n)
		}
	}
	rep.finish(ingest)
	if rep.Context != nil {
		rep.Context.finish()
		rep.HyMem.finish()
	}
	return rep, nil
}

func (rep *Report) haystack(ctx context.Context, h haystack, dir string, open Opener) (time.Duration, error) {
	clock := &Clock{}
	e, err := open(dir, clock.Now)
	if err != nil {
		return 0, err
	}
	defer e.Close()
	start := time.Now()
	turnOf := map[uint64]string{}
	for _, b := range h.batches {
		if len(b.inputs) == 0 {
			continue
		}
		clock.Set(b.end)
		ids, err := e.Remember(ctx, b.inputs...)
		if err != nil {
			return 0, err
		}
		for i, id := range ids {
			turnOf[id] = b.inputs[i].Sources[0]
		}
	}
	took := time.Since(start)
	rep.Records += len(turnOf)
	rep.Skipped += h.skipped
	if err := rep.collectImportance(e, h.evidence, turnOf); err != nil {
		return took, err
	}
	for _, q := range h.questions {
		if !q.at.IsZero() && q.at.After(clock.Now()) {
			clock.Set(q.at)
		}
		if err := rep.ask(ctx, e, h.scope, q, turnOf); err != nil {
			return took, err
		}
		if rep.Context != nil {
			if err := rep.Context.ask(ctx, e, h.scope, q, turnOf, rep.Questions[len(rep.Questions)-1]); err != nil {
				return took, err
			}
			if err := rep.HyMem.ask(ctx, e, h.scope, q, turnOf, rep.Context.Budget); err != nil {
				return took, err
			}
		}
	}
	rep.addTiers(e.TierStats())
	return took, nil
}

func (rep *Report) ask(ctx context.Context, e *engine.Engine, scope string, q probe, turnOf map[uint64]string) error {
	start := time.Now()
	res, err := e.Recall(ctx, engine.Query{Text: q.text, K: Depths[len(Depths)-1], Scope: scope})
	if err != nil {
		return fmt.Errorf("question %q: %w", q.text, err)
	}
	took := time.Since(start)
	rep.latencies = append(rep.latencies, took)
	ranked := make([]string, len(res))
	for i, r := range res {
		ranked[i] = turnOf[r.Record.ID]
	}
	rep.Questions = append(rep.Questions, &QuestionResult{
		ID: q.id, Category: q.category, Metrics: ScoreRanking(ranked, q.ev), LatencyMS: ms(took),
	})
	return nil
}

// Aggregate computes Overall and ByCategory from Questions.
func (rep *Report) Aggregate() {
	rep.Overall = *aggregate(rep.Questions)
	rep.ByCategory = map[string]*Metrics{}
	for cat, rs := range byCategory(rep.Questions) {
		rep.ByCategory[cat] = aggregate(rs)
	}
}

func (rep *Report) finish(ingest time.Duration) {
	rep.Aggregate()
	rep.IngestSeconds = ingest.Seconds()
	rep.ImportanceAUC = AUC(rep.importance, rep.evidence)
	lat := rep.latencies
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		rep.MedianLatencyMS = ms(lat[len(lat)/2])
		rep.P99LatencyMS = ms(lat[min(len(lat)-1, len(lat)*99/100)])
		var total time.Duration
		for _, l := range lat {
			total += l
		}
		rep.QuestionsPerSec = float64(len(lat)) / total.Seconds()
	}
}

func byCategory(rs []*QuestionResult) map[string][]*QuestionResult {
	out := map[string][]*QuestionResult{}
	for _, r := range rs {
		out[r.Category] = append(out[r.Category], r)
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
