package eval_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
	"github.com/hmo-dev/hmo/locomo"
)

// sufficiencyLoCoMo is the LoCoMo development file, relative to this package.
const sufficiencyLoCoMo = "../../shared/data/locomo-dev.json"

// probe is a Sufficiency that never stops the walk and records, for each
// tier it is asked about, the signals a score test could use.
type probe struct{ calls []probeCall }

type probeCall struct {
	tier        uint8
	ids         []uint64
	coverage    float64 // Result.Coverage of the best result
	cosine      float64 // Result.VectorScore of the best result
	bm25        float64 // Result.TextScore of the best result
	tooFew      bool    // fewer than k results
	fusedMargin float64 // fused score of the best minus that of the k-th
}

func (p *probe) Sufficient(_ context.Context, q *engine.Query, tier uint8, res []engine.Result) (bool, error) {
	c := probeCall{tier: tier, tooFew: len(res) < q.K}
	for _, r := range res[:min(10, len(res))] {
		c.ids = append(c.ids, r.Record.ID)
	}
	if len(res) > 0 {
		c.coverage, c.cosine, c.bm25 = res[0].Coverage, res[0].VectorScore, res[0].TextScore
		c.fusedMargin = res[0].Score - res[len(res)-1].Score
	}
	p.calls = append(p.calls, c)
	return false, nil
}

// BenchmarkSufficiencySignals measures, on locomo-dev with tiers smaller
// than a conversation (64 / 192), how well each signal a score test could
// use separates "the tiers' result is as good as the archive's" (turn
// Recall@10 at least the archive's) from "it is not": the ROC-AUC per
// signal at Tier 1 and at Tiers 1+2. The walk is never stopped early, so
// every question is answered by the archive and labelled.
//
//	go test -run '^$' -bench SufficiencySignals -benchtime 1x ./eval/
func BenchmarkSufficiencySignals(b *testing.B) {
	f, err := os.Open(sufficiencyLoCoMo)
	if err != nil {
		b.Skipf("LoCoMo data not available (%v): place ../shared beside the repository", err)
	}
	convs, err := locomo.Read(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	type sample struct {
		signals map[string]float64
		ok      bool
	}
	var byTier [3][]sample
	for ci, c := range convs {
		p := &probe{}
		clock := &eval.Clock{}
		o := engine.Options{Mode: engine.ModeTiered, Clock: clock.Now, Sufficiency: p}
		o.Tiers.Tier1Cap, o.Tiers.Tier2Cap = 64, 192
		e, err := hmo.Open(filepath.Join(b.TempDir(), fmt.Sprint(ci)), &o)
		if err != nil {
			b.Fatal(err)
		}
		turnOf, err := eval.Ingest(context.Background(), e, c, clock)
		if err != nil {
			b.Fatal(err)
		}
		turns := func(ids []uint64) []string {
			out := make([]string, len(ids))
			for i, id := range ids {
				out[i] = turnOf[id]
			}
			return out
		}
		for _, q := range c.QA {
			if q.Category == locomo.Adversarial || len(q.Evidence) == 0 {
				continue
			}
			p.calls = nil
			res, err := e.Recall(context.Background(), engine.Query{Text: q.Question, K: 20, Scope: c.ID})
			if err != nil {
				b.Fatal(err)
			}
			var archive []uint64
			for _, r := range res[:min(10, len(res))] {
				archive = append(archive, r.Record.ID)
			}
			want := eval.Score(turns(archive), q.Evidence).TurnRecall[10]
			for _, call := range p.calls {
				got := eval.Score(turns(call.ids), q.Evidence).TurnRecall[10]
				byTier[call.tier] = append(byTier[call.tier], sample{ok: got >= want, signals: map[string]float64{
					"coverage": call.coverage, "cosine": call.cosine, "bm25": call.bm25, "fused-margin": call.fusedMargin,
				}})
			}
		}
		e.Close()
	}
	for tier := 1; tier <= 2; tier++ {
		s := byTier[tier]
		ok := make([]bool, len(s))
		good := 0
		for i := range s {
			ok[i] = s[i].ok
			if ok[i] {
				good++
			}
		}
		b.ReportMetric(float64(good)/float64(len(s)), fmt.Sprintf("t%d-sufficient-share", tier))
		for _, name := range []string{"coverage", "cosine", "bm25", "fused-margin"} {
			xs := make([]float64, len(s))
			for i := range s {
				xs[i] = s[i].signals[name]
			}
			b.ReportMetric(eval.AUC(xs, ok), fmt.Sprintf("t%d-auc-%s", tier, name))
		}
	}
}
