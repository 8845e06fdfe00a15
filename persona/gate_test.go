package persona_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/persona"
)

func TestFirstUpdate(t *testing.T) {
	p := newPersona(t, nil)
	if p.Vector() != nil || p.Drift() != 0 || p.Firings() != 0 || !p.AnchorTime().IsZero() || p.Alignment([]float32{1, 0}) != 0 {
		t.Fatal("empty persona is not empty")
	}
	d, fired := observe(t, p, []float32{3, 4}, 5, "", t0)
	if d != 1 || !fired {
		t.Errorf("first update: drift %v fired %v, want 1 true", d, fired)
	}
	if got := p.Vector(); !near(float64(got[0]), 0.6) || !near(float64(got[1]), 0.8) {
		t.Errorf("Vector() = %v, want [0.6 0.8]", got)
	}
	if p.Firings() != 1 || p.Updates() != 1 || !p.AnchorTime().Equal(t0) || p.Drift() > 1e-12 || p.Dims() != 2 {
		t.Errorf("firings %d updates %d anchor %v drift %v dims %d", p.Firings(), p.Updates(), p.AnchorTime(), p.Drift(), p.Dims())
	}
	if h := p.History(); len(h) != 1 || h[0].Drift != 1 || h[0].Update != 1 {
		t.Errorf("History() = %+v, want one snapshot of drift 1", h)
	}
}

// TestMovingAverage checks the update rule by hand: p = e1, then e2 with
// η = 0.5 and I0 = 10 gives p = normalise(0.5·e1 + 0.5·e2).
func TestMovingAverage(t *testing.T) {
	tests := []struct {
		name       string
		rate, i0   float64
		want       [2]float64
		wantDrift  float64
		wantFiring bool
	}{
		{"half step", 0.5, 10, [2]float64{math.Sqrt2 / 2, math.Sqrt2 / 2}, 1 - math.Sqrt2/2, true},
		{"importance scales the step", 0.5, 2, [2]float64{0.9 / math.Hypot(0.9, 0.1), 0.1 / math.Hypot(0.9, 0.1)}, 1 - 0.9/math.Hypot(0.9, 0.1), false},
		{"zero importance: no move", 0.5, 0, [2]float64{1, 0}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPersona(t, &persona.Options{Rate: tt.rate})
			observe(t, p, []float32{1, 0}, 10, "", t0)
			d, fired := observe(t, p, []float32{0, 1}, tt.i0, "", t0)
			v := p.Vector()
			if !near(float64(v[0]), tt.want[0]) || !near(float64(v[1]), tt.want[1]) {
				t.Errorf("p = %v, want %v", v, tt.want)
			}
			if !near(d, tt.wantDrift) || fired != tt.wantFiring {
				t.Errorf("drift %v fired %v, want %v %v", d, fired, tt.wantDrift, tt.wantFiring)
			}
		})
	}
}

// TestGateThreshold: with η = 1 and I0 = 10 the persona jumps to each new
// vector, so the drift from the anchor is exactly 1 − cos of the angle.
func TestGateThreshold(t *testing.T) {
	tests := []struct {
		name      string
		drift     float64
		wantFired bool
	}{
		{"well below δ", 0.01, false},
		{"just below δ", 0.049, false},
		{"just above δ", 0.051, true},
		{"orthogonal", 1, true},
		{"opposite", 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPersona(t, &persona.Options{Rate: 1})
			observe(t, p, rot(4, 0), 10, "", t0)
			t1 := t0.Add(time.Hour)
			d, fired := observe(t, p, rot(4, angleFor(tt.drift)), 10, "", t1)
			if !near(d, tt.drift) || fired != tt.wantFired {
				t.Fatalf("drift %v fired %v, want %v %v", d, fired, tt.drift, tt.wantFired)
			}
			wantFirings, wantAnchor := 1, t0
			if tt.wantFired {
				wantFirings, wantAnchor = 2, t1
			}
			if p.Firings() != wantFirings || !p.AnchorTime().Equal(wantAnchor) {
				t.Errorf("firings %d anchor %v, want %d %v", p.Firings(), p.AnchorTime(), wantFirings, wantAnchor)
			}
			if tt.wantFired && p.Drift() > 1e-12 {
				t.Errorf("after firing Drift() = %v, want 0 (anchor moved to p)", p.Drift())
			}
			if !tt.wantFired && !near(p.Drift(), tt.drift) {
				t.Errorf("Drift() = %v, want %v", p.Drift(), tt.drift)
			}
		})
	}
}

// TestGateBelowDeltaNeverFires: many moves, each staying within δ of the
// anchor, never fire, so the caller never re-scores.
func TestGateBelowDeltaNeverFires(t *testing.T) {
	p := newPersona(t, &persona.Options{Rate: 1})
	observe(t, p, rot(8, 0), 10, "", t0)
	rng := rand.New(rand.NewPCG(1, 2))
	maxAngle := angleFor(0.049)
	for i := range 500 {
		theta := (rng.Float64()*2 - 1) * maxAngle
		d, fired := observe(t, p, rot(8, theta), rng.Float64()*10, "", t0.Add(time.Duration(i)*time.Minute))
		if fired || d > persona.DefaultDelta {
			t.Fatalf("update %d: drift %v fired %v", i, d, fired)
		}
	}
	if p.Firings() != 1 || !p.AnchorTime().Equal(t0) {
		t.Errorf("firings %d anchor %v, want 1 %v", p.Firings(), p.AnchorTime(), t0)
	}
}

// TestGateAccumulatedDrift: small steps towards a new direction add up;
// the gate fires exactly when the drift first exceeds δ, once, and the
// drift then restarts from the new anchor.
func TestGateAccumulatedDrift(t *testing.T) {
	p := newPersona(t, nil) // η = 0.05
	observe(t, p, rot(3, 0), 10, "", t0)
	target := rot(3, math.Pi/2)
	var fires []int
	prev := 0.0
	for i := 1; i <= 200; i++ {
		d, fired := observe(t, p, target, 10, "", t0.Add(time.Duration(i)*time.Hour))
		if fired != (d > persona.DefaultDelta) {
			t.Fatalf("update %d: drift %v fired %v", i, d, fired)
		}
		if fired {
			fires = append(fires, i)
			if p.Drift() > 1e-12 {
				t.Fatalf("update %d: Drift() = %v after firing", i, p.Drift())
			}
			prev = 0
			continue
		}
		if d < prev {
			t.Fatalf("update %d: drift fell from %v to %v while moving away", i, prev, d)
		}
		prev = d
	}
	// Computed independently (p_k+1 = normalise(0.95·p_k + 0.05·e2)): the
	// drift first exceeds 0.05 at update 7 (0.0637), then, from the new
	// anchors, at 15 (0.0620) and 25 (0.0523); the steps shrink as p
	// settles on e2.
	if len(fires) < 3 || fires[0] != 7 || fires[1] != 15 || fires[2] != 25 {
		t.Fatalf("firings at %v, want 7, 15, 25 first", fires)
	}
	if p.Firings() != 1+len(fires) {
		t.Errorf("Firings() = %d, want %d", p.Firings(), 1+len(fires))
	}
}

func TestGateOff(t *testing.T) {
	p := newPersona(t, &persona.Options{GateOff: true})
	for i := range 10 {
		now := t0.Add(time.Duration(i) * time.Minute)
		_, fired := observe(t, p, rot(2, 0), 5, "", now) // no movement at all
		if !fired {
			t.Fatalf("update %d did not fire with GateOff", i)
		}
		if !p.AnchorTime().Equal(now) {
			t.Fatalf("anchor time %v, want %v", p.AnchorTime(), now)
		}
	}
	if p.Firings() != 10 {
		t.Errorf("Firings() = %d, want 10", p.Firings())
	}
}

func TestAlignment(t *testing.T) {
	p := newPersona(t, nil)
	observe(t, p, []float32{1, 0, 0}, 5, "", t0)
	tests := []struct {
		name string
		vec  []float32
		want float64
	}{
		{"same direction", []float32{2, 0, 0}, 1},
		{"45 degrees", []float32{1, 1, 0}, math.Sqrt2 / 2},
		{"orthogonal", []float32{0, 1, 0}, 0},
		{"opposite clamps to 0", []float32{-1, 0, 0}, 0},
		{"wrong length", []float32{1, 0}, 0},
		{"zero vector", []float32{0, 0, 0}, 0},
		{"NaN", []float32{float32(math.NaN()), 0, 0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Alignment(tt.vec); !near(got, tt.want) {
				t.Errorf("Alignment(%v) = %v, want %v", tt.vec, got, tt.want)
			}
		})
	}
}
