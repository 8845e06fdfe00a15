package eval

import (
	"sort"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/locomo"
)

// scoredLabel is a score with a binary label, for ROC-AUC.
type scoredLabel struct {
	score    float64
	positive bool
}

// collectImportance records each turn's I0 labelled by whether any
// non-adversarial question cites it as evidence.
func (rep *Report) collectImportance(e *engine.Engine, c locomo.Conversation, turnOf map[uint64]string) error {
	evidence := map[string]bool{}
	for _, q := range c.QA {
		if q.Category != locomo.Adversarial {
			for _, id := range q.Evidence {
				evidence[id] = true
			}
		}
	}
	return e.Scan(func(r *engine.Record) error {
		if turn, ok := turnOf[r.ID]; ok {
			rep.importance = append(rep.importance, scoredLabel{r.Header.I0, evidence[turn]})
		}
		return nil
	})
}

// AUC is the ROC-AUC of scores separating positives from negatives, ties
// counted half (the Mann-Whitney statistic). It is 0.5 when either class
// is empty.
func AUC(xs []scoredLabel) float64 {
	s := append([]scoredLabel(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i].score < s[j].score })
	var pos, neg, rankSum float64
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j].score == s[i].score {
			j++
		}
		mid := float64(i+j+1) / 2 // average 1-based rank of the tie group
		for k := i; k < j; k++ {
			if s[k].positive {
				pos++
				rankSum += mid
			} else {
				neg++
			}
		}
		i = j
	}
	if pos == 0 || neg == 0 {
		return 0.5
	}
	return (rankSum - pos*(pos+1)/2) / (pos * neg)
}
