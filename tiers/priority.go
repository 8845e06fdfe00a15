package tiers

import (
	"fmt"
	"math"
	"time"
)

// Defaults of Params, the coefficients of Eq. 5 (DESIGN.md section 3.3).
const (
	// DefaultAlpha is the weight of the normalised initial importance I0/10.
	DefaultAlpha = 0.6
	// DefaultBeta is the weight of the persona alignment S_p.
	DefaultBeta = 0.4
	// DefaultGamma is the weight of the recall gain ln(1+n).
	DefaultGamma = 0.2
	// DefaultLambda is the base decay rate, per day.
	DefaultLambda = 0.05
)

// Params are the coefficients of the priority score (Eq. 5). The zero
// Params stands for DefaultParams in Options; any other value is used as
// given, so a single coefficient can be set to 0 for an ablation.
type Params struct {
	Alpha  float64 // weight of Î0 = I0/10; >= 0
	Beta   float64 // weight of S_p; >= 0
	Gamma  float64 // weight of ln(1+n); >= 0
	Lambda float64 // decay rate per day; >= 0
}

// DefaultParams returns the default coefficients.
func DefaultParams() Params {
	return Params{Alpha: DefaultAlpha, Beta: DefaultBeta, Gamma: DefaultGamma, Lambda: DefaultLambda}
}

func (p Params) validate() error {
	for _, c := range []struct {
		name string
		v    float64
	}{{"Alpha", p.Alpha}, {"Beta", p.Beta}, {"Gamma", p.Gamma}, {"Lambda", p.Lambda}} {
		if math.IsNaN(c.v) || math.IsInf(c.v, 0) || c.v < 0 {
			return fmt.Errorf("%w: Params.%s = %v, want a finite value >= 0", ErrInvalidOption, c.name, c.v)
		}
	}
	return nil
}

// Priority is Eq. 5 of DESIGN.md:
//
//	P = (α·Î0 + β·S_p + γ·ln(1+n)) · exp(−λ·Δt / (1 + ln(1+n)))
//
// with Î0 = i0/10, S_p = sp clamped to [0, 1] (the caller passes
// max(0, cos(e, p)); NaN counts as 0), n the recall count and Δt = dtDays
// the time since the last access in days (negative or NaN counts as 0).
// i0 is used as given: the Manager checks it lies in [0, 10].
func Priority(p Params, i0, sp float64, n uint32, dtDays float64) float64 {
	switch {
	case math.IsNaN(sp) || sp < 0:
		sp = 0
	case sp > 1:
		sp = 1
	}
	if math.IsNaN(dtDays) || dtDays < 0 {
		dtDays = 0
	}
	g := math.Log1p(float64(n))
	base := p.Alpha*i0/10 + p.Beta*sp + p.Gamma*g
	x := p.Lambda * dtDays
	if math.IsNaN(x) { // 0 · +Inf: no decay at all
		x = 0
	}
	return base * math.Exp(-x/(1+g))
}

// days is the time from t to now in days; Duration saturates at about
// 292 years, which decays any priority to 0 anyway.
func days(now, t time.Time) float64 {
	return now.Sub(t).Hours() / 24
}

// clampSp maps a persona alignment to [0, 1]; NaN becomes 0.
func clampSp(sp float64) float64 {
	switch {
	case math.IsNaN(sp) || sp < 0:
		return 0
	case sp > 1:
		return 1
	}
	return sp
}
