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
	"github.com/hmo-dev/hmo/locomo"
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

// Depths are the cut-offs turn recall is reported at.
var Depths = []int{5, 10, 20}

// LoCoMoOptions configure a LoCoMo run.
type LoCoMoOptions struct {
	// WorkDir holds the temporary stores, one per conversation, removed
	// afterwards. Default os.TempDir().
	WorkDir string
	// Progress, when set, is called after each conversation.
	Progress func(done, total int)
	// ContextBudget, when positive, also measures memory_context blocks
	// of that many tokens for every question (Report.Context).
	ContextBudget int
	// ContextMinScore is the blocks' relevance floor (api.ContextRequest
	// MinScore: 0 the default floor, negative none).
	ContextMinScore float64
	// HyMemSufficiency judges HyMem's light path; nil means the engine's
	// Options.Sufficiency.
	HyMemSufficiency engine.Sufficiency
}

// Metrics are recall figures averaged over questions.
type Metrics struct {
	Questions     int             `json:"questions"`
	TurnRecall    map[int]float64 `json:"turn_recall"`    // depth -> mean fraction of evidence turns retrieved
	AllHit10      float64         `json:"all_hit_10"`     // share of questions with every evidence turn in the top 10
	SessionRecall float64         `json:"session_recall"` // mean fraction of evidence sessions in the top 5
}

// Report is the outcome of a LoCoMo run.
type Report struct {
	Conversations   int                 `json:"conversations"`
	Records         int                 `json:"records"`
	Skipped         int                 `json:"skipped_no_evidence"` // non-adversarial questions without resolvable evidence
	Overall         Metrics             `json:"overall"`
	ByCategory      map[string]*Metrics `json:"by_category"`
	MedianLatencyMS float64             `json:"median_latency_ms"`
	P99LatencyMS    float64             `json:"p99_latency_ms"`
	ImportanceAUC   float64             `json:"importance_auc"`    // ROC-AUC of I0 separating evidence turns from the rest
	Tiers           *TierReport         `json:"tiers,omitempty"`   // tiered mode only
	Context         *ContextReport      `json:"context,omitempty"` // with LoCoMoOptions.ContextBudget
	HyMem           *HyMemReport        `json:"hymem,omitempty"`   // with LoCoMoOptions.ContextBudget
	IngestSeconds   float64             `json:"ingest_seconds"`
	QuestionsPerSec float64             `json:"questions_per_second"`
	latencies       []time.Duration
	importance      []float64 // I0 of every turn
	evidence        []bool    // whether that turn is cited as evidence
	sums            map[string]*sums
}

type sums struct {
	n            int
	turn         map[int]float64
	allHit, sess float64
}

// LoCoMo ingests each conversation into its own store in session order,
// asks every non-adversarial question, and reports recall.
func LoCoMo(ctx context.Context, convs []locomo.Conversation, open Opener, o LoCoMoOptions) (*Report, error) {
	work, err := os.MkdirTemp(o.WorkDir, "hmo-eval-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	rep := &Report{Conversations: len(convs), sums: map[string]*sums{}}
	if o.ContextBudget > 0 {
		rep.Context = newContextReport(o.ContextBudget, o.ContextMinScore)
		rep.HyMem = &HyMemReport{suff: o.HyMemSufficiency}
	}
	var ingest time.Duration
	for i, c := range convs {
		d, err := rep.conversation(ctx, c, filepath.Join(work, strconv.Itoa(i)), open)
		if err != nil {
			return nil, fmt.Errorf("eval: %s: %w", c.ID, err)
		}
		ingest += d
		if o.Progress != nil {
			o.Progress(i+1, len(convs))
		}
	}
	rep.finish(ingest)
	if rep.Context != nil {
		rep.Context.finish()
		rep.HyMem.finish()
	}
	return rep, nil
}

func (rep *Report) conversation(ctx context.Context, c locomo.Conversation, dir string, open Opener) (time.Duration, error) {
	clock := &Clock{}
	e, err := open(dir, clock.Now)
	if err != nil {
		return 0, err
	}
	defer e.Close()
	start := time.Now()
	turnOf, err := Ingest(ctx, e, c, clock)
	if err != nil {
		return 0, err
	}
	took := time.Since(start)
	rep.Records += len(turnOf)
	if err := rep.collectImportance(e, c, turnOf); err != nil {
		return took, err
	}
	for _, q := range c.QA {
		if q.Category == locomo.Adversarial {
			continue
		}
		if len(q.Evidence) == 0 {
			rep.Skipped++
			continue
		}
		if err := rep.ask(ctx, e, c.ID, q, turnOf); err != nil {
			return took, err
		}
		if rep.Context != nil {
			if err := rep.Context.ask(ctx, e, c.ID, q, turnOf); err != nil {
				return took, err
			}
			if err := rep.HyMem.ask(ctx, e, c.ID, q, turnOf, rep.Context.Budget); err != nil {
				return took, err
			}
		}
	}
	rep.addTiers(e.TierStats())
	return took, nil
}

// Ingest remembers a conversation's sessions in order, one batch per
// session, dated as locomo.Conversation.Inputs says, and returns the turn
// id of each record. A non-nil clock is set just after each session's last
// turn before the session is remembered.
func Ingest(ctx context.Context, e *engine.Engine, c locomo.Conversation, clock *Clock) (map[uint64]string, error) {
	turnOf := map[uint64]string{}
	for _, s := range c.Inputs() {
		if clock != nil {
			clock.Set(s.End)
		}
		ids, err := e.Remember(ctx, s.Inputs...)
		if err != nil {
			return nil, err
		}
		for i, id := range ids {
			turnOf[id] = s.Session.Turns[i].ID
		}
	}
	return turnOf, nil
}

func (rep *Report) ask(ctx context.Context, e *engine.Engine, scope string, q locomo.Question, turnOf map[uint64]string) error {
	start := time.Now()
	res, err := e.Recall(ctx, engine.Query{Text: q.Question, K: Depths[len(Depths)-1], Scope: scope})
	if err != nil {
		return fmt.Errorf("question %q: %w", q.Question, err)
	}
	rep.latencies = append(rep.latencies, time.Since(start))
	ranked := make([]string, len(res))
	for i, r := range res {
		ranked[i] = turnOf[r.Record.ID]
	}
	m := Score(ranked, q.Evidence)
	for _, key := range []string{"overall", locomo.CategoryName(q.Category)} {
		s := rep.sums[key]
		if s == nil {
			s = &sums{turn: map[int]float64{}}
			rep.sums[key] = s
		}
		s.add(m)
	}
	return nil
}

// Score computes one question's metrics from the ranked turn ids. A
// question without evidence scores 0 (LoCoMo skips them).
func Score(ranked, evidence []string) Metrics {
	m := Metrics{Questions: 1, TurnRecall: map[int]float64{}}
	for _, d := range Depths {
		m.TurnRecall[d] = fraction(evidence, ranked[:min(d, len(ranked))], func(s string) string { return s })
	}
	if m.TurnRecall[10] == 1 {
		m.AllHit10 = 1
	}
	sess := func(id string) string { return strconv.Itoa(locomo.SessionOf(id)) }
	m.SessionRecall = fraction(evidence, ranked[:min(5, len(ranked))], sess)
	return m
}

// fraction is the share of distinct keys of want found among the keys of
// got, 0 when want is empty.
func fraction(want, got []string, key func(string) string) float64 {
	if len(want) == 0 {
		return 0
	}
	have := map[string]bool{}
	for _, g := range got {
		have[key(g)] = true
	}
	need := map[string]bool{}
	for _, w := range want {
		need[key(w)] = true
	}
	hit := 0
	for k := range need {
		if have[k] {
			hit++
		}
	}
	return float64(hit) / float64(len(need))
}

func (s *sums) add(m Metrics) {
	s.n++
	for d, v := range m.TurnRecall {
		s.turn[d] += v
	}
	s.allHit += m.AllHit10
	s.sess += m.SessionRecall
}

func (s *sums) mean() *Metrics {
	m := &Metrics{Questions: s.n, TurnRecall: map[int]float64{}}
	if s.n == 0 {
		return m
	}
	n := float64(s.n)
	for d, v := range s.turn {
		m.TurnRecall[d] = v / n
	}
	m.AllHit10, m.SessionRecall = s.allHit/n, s.sess/n
	return m
}

func (rep *Report) finish(ingest time.Duration) {
	rep.ByCategory = map[string]*Metrics{}
	for k, s := range rep.sums {
		if k == "overall" {
			rep.Overall = *s.mean()
		} else {
			rep.ByCategory[k] = s.mean()
		}
	}
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

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
