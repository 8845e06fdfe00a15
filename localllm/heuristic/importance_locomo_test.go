package heuristic_test

import (
	"cmp"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/hmo-dev/hmo/eval"
	"github.com/hmo-dev/hmo/localllm/heuristic"
	"github.com/hmo-dev/hmo/locomo"
)

// importanceLoCoMo is the LoCoMo development file, relative to this
// package; HMO_LOCOMO overrides it.
const importanceLoCoMo = "../../../shared/data/locomo-dev.json"

// importanceAUCFloor is the least overall ROC-AUC of I0 on the LoCoMo
// development file that TestLoCoMoImportanceAUC accepts, a little below
// the measured value (0.785 with the default weights).
const importanceAUCFloor = 0.77

// labelledTurns is one conversation's turns as the engine stores them (the
// image caption appended) with their labels: true when a non-adversarial
// question cites the turn as evidence.
type labelledTurns struct {
	id     string
	texts  []string
	labels []bool
}

// loadImportanceData reads the LoCoMo file through the locomo package, or
// skips the test.
func loadImportanceData(t testing.TB) []labelledTurns {
	t.Helper()
	path := cmp.Or(os.Getenv("HMO_LOCOMO"), filepath.FromSlash(importanceLoCoMo))
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		t.Skipf("LoCoMo data not found at %s (set HMO_LOCOMO to its path)", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	convs, err := locomo.Read(f)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	out := make([]labelledTurns, 0, len(convs))
	for _, c := range convs {
		evidence := map[string]bool{}
		for _, q := range c.QA {
			if q.Category == locomo.Adversarial {
				continue
			}
			for _, id := range q.Evidence {
				evidence[id] = true
			}
		}
		lt := labelledTurns{id: c.ID}
		for _, s := range c.Sessions {
			for _, tu := range s.Turns {
				lt.texts = append(lt.texts, tu.Text)
				lt.labels = append(lt.labels, evidence[tu.ID])
			}
		}
		out = append(out, lt)
	}
	return out
}

// importanceAUC scores every turn and returns the AUC over all
// conversations pooled and per conversation.
func importanceAUC(h *heuristic.Heuristic, data []labelledTurns) (float64, []float64) {
	var all []float64
	var labels []bool
	per := make([]float64, len(data))
	for i, c := range data {
		scores := make([]float64, len(c.texts))
		for j, text := range c.texts {
			scores[j] = h.Importance(text)
		}
		per[i] = eval.AUC(scores, c.labels)
		all = append(all, scores...)
		labels = append(labels, c.labels...)
	}
	return eval.AUC(all, labels), per
}

// lengthAUC is the AUC of the text length in runes, the baseline any
// scorer should beat.
func lengthAUC(data []labelledTurns) float64 {
	var lengths []float64
	var labels []bool
	for _, c := range data {
		for _, text := range c.texts {
			lengths = append(lengths, float64(utf8.RuneCountInString(text)))
		}
		labels = append(labels, c.labels...)
	}
	return eval.AUC(lengths, labels)
}

// TestLoCoMoImportanceAUC measures how well I0 separates the turns that
// questions cite as evidence from the others, overall, per conversation
// and with each feature group turned off.
func TestLoCoMoImportanceAUC(t *testing.T) {
	data := loadImportanceData(t)
	h := newHeuristic(t, nil)
	auc, per := importanceAUC(h, data)
	t.Logf("importance ROC-AUC %.4f over %d conversations (text length alone: %.4f)", auc, len(data), lengthAUC(data))
	for i, c := range data {
		npos := 0
		for _, l := range c.labels {
			if l {
				npos++
			}
		}
		t.Logf("  %s: %.4f (%d turns, %d evidence)", c.id, per[i], len(c.texts), npos)
	}
	for _, f := range heuristic.Features() {
		if testing.Short() {
			break // ablations: one more pass over the data per feature group
		}
		if f == heuristic.FeatureProfile {
			continue
		}
		without, _ := importanceAUC(newHeuristic(t, &heuristic.Options{Weights: map[heuristic.Feature]float64{f: 0}}), data)
		t.Logf("  without %-10s %.4f (%+.4f)", f, without, without-auc)
	}
	if auc < importanceAUCFloor {
		t.Errorf("importance ROC-AUC = %.4f, want at least %.2f", auc, importanceAUCFloor)
	}
}
