package eval_test

import (
	"math"
	"testing"

	"github.com/hmo-dev/hmo/eval"
)

func TestAUC(t *testing.T) {
	tests := []struct {
		name     string
		scores   []float64
		positive []bool
		want     float64
	}{
		{"perfect", []float64{1, 2, 3}, []bool{false, false, true}, 1},
		{"inverted", []float64{3, 1}, []bool{false, true}, 0},
		{"all tied", []float64{5, 5, 5}, []bool{true, false, false}, 0.5},
		{"hand computed", []float64{1, 2, 3, 4}, []bool{false, true, false, true}, 0.75},
		{"one class", []float64{1, 2}, []bool{true, true}, 0.5},
		{"ties across classes", []float64{1, 2, 2, 3}, []bool{false, true, false, true}, 0.875},
		{"unsorted input", []float64{4, 1, 3, 2}, []bool{true, false, false, true}, 0.75},
	}
	for _, tt := range tests {
		if got := eval.AUC(tt.scores, tt.positive); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: AUC = %v, want %v", tt.name, got, tt.want)
		}
	}
}
