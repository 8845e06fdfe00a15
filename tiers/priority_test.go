package tiers_test

import (
	"math"
	"testing"

	"github.com/hmo-dev/hmo/tiers"
)

func TestPriority(t *testing.T) {
	d := tiers.DefaultParams()
	tests := []struct {
		name   string
		p      tiers.Params
		i0, sp float64
		n      uint32
		dt     float64
		want   float64
	}{
		// Hand-computed from Eq. 5 with α=0.6, β=0.4, γ=0.2, λ=0.05.
		{"max, fresh", d, 10, 1, 0, 0, 1.0},                             // 0.6 + 0.4
		{"decay 10 days", d, 5, 0.5, 0, 10, 0.3032653298563167},         // 0.5·e^−0.5
		{"recalled 3 times", d, 8, 0.25, 3, 20, 0.5637890500094175},     // (0.48+0.1+0.2 ln4)·e^(−1/(1+ln4))
		{"often recalled, old", d, 1, 0, 100, 365, 0.03811015497193556}, // (0.06+0.2 ln101)·e^(−18.25/(1+ln101))
		{"negative alignment clamps to 0", d, 10, -0.3, 0, 0, 0.6},
		{"alignment above 1 clamps to 1", d, 0, 1.5, 0, 0, 0.4},
		{"NaN alignment counts as 0", d, 10, math.NaN(), 0, 0, 0.6},
		{"negative Δt clamps to 0", d, 10, 1, 0, -5, 1.0},
		{"NaN Δt counts as 0", d, 10, 1, 0, math.NaN(), 1.0},
		{"infinite Δt decays to 0", d, 10, 1, 0, math.Inf(1), 0},
		{"λ = 0: no decay, even at infinite Δt", tiers.Params{Alpha: 1}, 10, 0, 0, math.Inf(1), 1},
		{"β = 0 ablation", tiers.Params{Alpha: 0.6, Gamma: 0.2, Lambda: 0.05}, 10, 1, 0, 0, 0.6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tiers.Priority(tt.p, tt.i0, tt.sp, tt.n, tt.dt)
			if math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Priority(%v, %v, %v, %d, %v) = %.15g, want %.15g", tt.p, tt.i0, tt.sp, tt.n, tt.dt, got, tt.want)
			}
		})
	}
}

// TestPriorityRecallFlattensDecay: ln(1+n) is a resistance, so after the
// same idle time a recalled record keeps a larger share of its score.
func TestPriorityRecallFlattensDecay(t *testing.T) {
	d := tiers.DefaultParams()
	share := func(n uint32) float64 {
		return tiers.Priority(d, 5, 0.5, n, 30) / tiers.Priority(d, 5, 0.5, n, 0)
	}
	prev := share(0)
	for _, n := range []uint32{1, 5, 50, 1000} {
		s := share(n)
		if s <= prev {
			t.Errorf("after 30 days, n=%d keeps %.4f of its score, not more than %.4f", n, s, prev)
		}
		prev = s
	}
}

func TestDefaultParams(t *testing.T) {
	got := tiers.DefaultParams()
	want := tiers.Params{Alpha: 0.6, Beta: 0.4, Gamma: 0.2, Lambda: 0.05}
	if got != want {
		t.Errorf("DefaultParams() = %+v, want %+v", got, want)
	}
}
