package eval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
)

// ContextAssemblies are the memory_context assemblies a context-budget run
// compares; each later one is compared with the first two (plain top-k
// filling the budget, and the top-k block of ContextCandidates) by a
// paired bootstrap.
var ContextAssemblies = []api.Assembly{api.AssemblyRanked, api.AssemblyTopK, api.AssemblyRankedFacts, api.AssemblyThemes}

// ContextReport measures memory_context blocks at one token budget: for
// each assembly the share of questions whose every evidence turn is in
// the block (all-evidence-in-context) and the block's mean size, and each
// assembly against the first by a paired bootstrap over questions.
type ContextReport struct {
	Budget     int                `json:"budget_tokens"`
	MinScore   float64            `json:"min_score"`
	Assemblies []AssemblyFigures  `json:"assemblies"`
	Paired     []PairedDifference `json:"paired"`
	perQ       map[string][]float64
	tokens     map[string][]float64
	cats       []string
}

// AssemblyFigures are one assembly's context figures.
type AssemblyFigures struct {
	Assembly    string             `json:"assembly"`
	AllEvidence float64            `json:"all_evidence_in_context"` // share of questions
	MeanTokens  float64            `json:"mean_tokens"`
	MeanRecords float64            `json:"mean_records"`
	MedianMS    float64            `json:"median_latency_ms"` // per block, recall included
	MaxMS       float64            `json:"max_latency_ms"`    // the first block of a store builds its themes
	ByCategory  map[string]float64 `json:"by_category"`       // all-evidence share per category
	records     []float64
	lat         []float64
}

// PairedDifference is run minus base over the same questions, with a 95%
// percentile interval from a paired bootstrap.
type PairedDifference struct {
	Base   string     `json:"base"`
	Run    string     `json:"run"`
	Metric string     `json:"metric"`
	Diff   float64    `json:"diff"`
	CI95   [2]float64 `json:"ci95"`
}

// contextResamples is how many resamples the paired bootstrap draws.
const contextResamples = 2000

func newContextReport(budget int, minScore float64) *ContextReport {
	return &ContextReport{Budget: budget, MinScore: minScore, perQ: map[string][]float64{}, tokens: map[string][]float64{}}
}

// ask measures one question's blocks under every assembly.
// It also records them in qr.Metrics ("context_all_evidence_<assembly>",
// "context_tokens_<assembly>"), so --baseline compares them too.
func (cr *ContextReport) ask(ctx context.Context, e *engine.Engine, scope string, q probe, turnOf map[uint64]string, qr *QuestionResult) error {
	l := api.NewLocal(e).WithoutAccess()
	cr.cats = append(cr.cats, q.category)
	for _, a := range ContextAssemblies {
		start := time.Now()
		resp, err := l.WithAssembly(a).Context(ctx, api.ContextRequest{Prompt: q.text, Scope: scope, MaxTokens: cr.Budget, MinScore: cr.MinScore})
		if err != nil {
			return fmt.Errorf("context %s: %w", a, err)
		}
		got := make([]string, len(resp.IDs))
		for i, id := range resp.IDs {
			got[i] = turnOf[id]
		}
		all := 0.0
		if len(q.ev.Turns) > 0 && fraction(q.ev.Turns, got) == 1 {
			all = 1
		}
		name := a.String()
		if qr != nil && qr.Metrics != nil {
			qr.Metrics["context_all_evidence_"+name] = all
			qr.Metrics["context_tokens_"+name] = float64(resp.Tokens)
		}
		cr.perQ[name] = append(cr.perQ[name], all)
		cr.tokens[name] = append(cr.tokens[name], float64(resp.Tokens))
		cr.recordCount(name, len(resp.IDs), ms(time.Since(start)))
	}
	return nil
}

func (cr *ContextReport) recordCount(name string, n int, lat float64) {
	for i := range cr.Assemblies {
		if a := &cr.Assemblies[i]; a.Assembly == name {
			a.records, a.lat = append(a.records, float64(n)), append(a.lat, lat)
			return
		}
	}
	cr.Assemblies = append(cr.Assemblies, AssemblyFigures{Assembly: name, records: []float64{float64(n)}, lat: []float64{lat}})
}

func (cr *ContextReport) finish() {
	for i := range cr.Assemblies {
		a := &cr.Assemblies[i]
		a.AllEvidence = meanOf(cr.perQ[a.Assembly])
		a.MeanTokens = meanOf(cr.tokens[a.Assembly])
		a.MeanRecords = meanOf(a.records)
		sort.Float64s(a.lat)
		if len(a.lat) > 0 {
			a.MedianMS, a.MaxMS = a.lat[len(a.lat)/2], a.lat[len(a.lat)-1]
		}
		a.ByCategory = map[string]float64{}
		n := map[string]float64{}
		for j, c := range cr.cats {
			a.ByCategory[c] += cr.perQ[a.Assembly][j]
			n[c]++
		}
		for c := range a.ByCategory {
			a.ByCategory[c] /= n[c]
		}
	}
	if len(cr.Assemblies) == 0 {
		return
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i, a := range cr.Assemblies {
		for _, b := range cr.Assemblies[:min(i, 2)] {
			cr.pair(b.Assembly, a.Assembly, rng)
		}
	}
}

// pair adds run's paired differences from base.
func (cr *ContextReport) pair(base, run string, rng *rand.Rand) {
	for _, m := range []struct {
		name string
		v    map[string][]float64
	}{{"all_evidence_in_context", cr.perQ}, {"tokens", cr.tokens}} {
		iv := PairedBootstrap(m.v[base], m.v[run], contextResamples, rng)
		cr.Paired = append(cr.Paired, PairedDifference{Base: base, Run: run, Metric: m.name, Diff: iv.Delta, CI95: [2]float64{iv.Lo, iv.Hi}})
	}
}

func meanOf(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
