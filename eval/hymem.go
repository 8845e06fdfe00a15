package eval

import (
	"context"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/hymem"
)

// HyMemReport measures HyMem's two paths at the context budget: the
// share of questions that stay on the light path (Level-1 summaries), the
// tokens each path's block holds, and on each path the share of questions
// whose every evidence turn's own text is in the block.
type HyMemReport struct {
	Questions        int       `json:"questions"`
	LightShare       float64   `json:"light_share"`
	LightTokens      float64   `json:"light_mean_tokens"`
	DeepTokens       float64   `json:"deep_mean_tokens"`
	MeanTokens       float64   `json:"mean_tokens"`
	LightAllEvidence float64   `json:"light_all_evidence"`
	DeepAllEvidence  float64   `json:"deep_all_evidence"`
	AllEvidence      float64   `json:"all_evidence"`
	DeepRounds       float64   `json:"deep_mean_rounds"`
	light, deep      []float64 // all-evidence per question, by path
	lightT, deepT    []float64
	rounds           []float64
	suff             engine.Sufficiency // nil: the engine's
}

func (h *HyMemReport) ask(ctx context.Context, e *engine.Engine, scope string, q probe, turnOf map[uint64]string, budget int) error {
	suff := h.suff
	if suff == nil {
		suff = e.Options().Sufficiency
	}
	res, err := hymem.Retrieve(ctx, e, suff, engine.Query{Text: q.text, Scope: scope}, nil)
	if err != nil {
		return err
	}
	text, ids := hymem.Render(res, e, budget*api.BytesPerToken)
	got := make([]string, len(ids))
	for i, id := range ids {
		got[i] = turnOf[id]
	}
	all := 0.0
	if len(q.ev.Turns) > 0 && fraction(q.ev.Turns, got) == 1 {
		all = 1
	}
	tok := float64(api.EstimateTokens(text))
	if res.Path == hymem.Light {
		h.light, h.lightT = append(h.light, all), append(h.lightT, tok)
	} else {
		h.deep, h.deepT = append(h.deep, all), append(h.deepT, tok)
		h.rounds = append(h.rounds, float64(res.Rounds))
	}
	return nil
}

func (h *HyMemReport) finish() {
	nl, nd := len(h.light), len(h.deep)
	h.Questions = nl + nd
	if h.Questions == 0 {
		return
	}
	h.LightShare = float64(nl) / float64(h.Questions)
	h.LightTokens, h.DeepTokens = meanOf(h.lightT), meanOf(h.deepT)
	h.MeanTokens = meanOf(append(append([]float64{}, h.lightT...), h.deepT...))
	h.LightAllEvidence, h.DeepAllEvidence = meanOf(h.light), meanOf(h.deep)
	h.AllEvidence = meanOf(append(append([]float64{}, h.light...), h.deep...))
	h.DeepRounds = meanOf(h.rounds)
}
