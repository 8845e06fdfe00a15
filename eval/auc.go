package eval

import (
	"sort"

	"github.com/hmo-dev/hmo/engine"
)

// collectImportance records each turn's I0 labelled by whether a scored
// question cites it as evidence.
func (rep *Report) collectImportance(e *engine.Engine, evidence map[string]bool, turnOf map[uint64]string) error {
	return e.Scan(func(r *engine.Record) error {
		if turn, ok := turnOf[r.ID]; ok {
			rep.importance = append(rep.importance, r.Header.I0)
			rep.evidence = append(rep.evidence, evidence[turn])
		}
		return nil
	})
}

// AUC is the ROC-AUC of scores separating the positives from the rest
// (positive[i] labels scores[i]), ties counted half: the Mann-Whitney
// statistic. It is 0.5 when either class is empty.
func AUC(scores []float64, positive []bool) float64 {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return scores[idx[a]] < scores[idx[b]] })
	var pos, rankSum float64
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && scores[idx[j]] == scores[idx[i]] {
			j++
		}
		mid := float64(i+j+1) / 2 // average 1-based rank of the tie group
		for _, k := range idx[i:j] {
			if positive[k] {
				pos++
				rankSum += mid
			}
		}
		i = j
	}
	neg := float64(len(scores)) - pos
	if pos == 0 || neg == 0 {
		return 0.5
	}
	return (rankSum - pos*(pos+1)/2) / (pos * neg)
}
