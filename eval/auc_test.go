package eval

import (
	"math"
	"testing"
)

func TestAUC(t *testing.T) {
	tests := []struct {
		name string
		in   []scoredLabel
		want float64
	}{
		{"perfect", []scoredLabel{{1, false}, {2, false}, {3, true}}, 1},
		{"inverted", []scoredLabel{{3, false}, {1, true}}, 0},
		{"all tied", []scoredLabel{{5, true}, {5, false}, {5, false}}, 0.5},
		{"hand computed", []scoredLabel{{1, false}, {2, true}, {3, false}, {4, true}}, 0.75},
		{"one class", []scoredLabel{{1, true}, {2, true}}, 0.5},
	}
	for _, tt := range tests {
		if got := AUC(tt.in); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: AUC = %v, want %v", tt.name, got, tt.want)
		}
	}
}
