package persona_test

import (
	"math"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/persona"
)

var t0 = time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)

func newPersona(t testing.TB, o *persona.Options) *persona.Persona {
	t.Helper()
	p, err := persona.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// rot returns the unit vector at angle theta (radians) from e1 towards e2,
// in dims dimensions.
func rot(dims int, theta float64) []float32 {
	v := make([]float32, dims)
	v[0], v[1] = float32(math.Cos(theta)), float32(math.Sin(theta))
	return v
}

// angleFor returns the angle whose drift 1 − cos is d.
func angleFor(d float64) float64 { return math.Acos(1 - d) }

func observe(t testing.TB, p *persona.Persona, v []float32, importance float64, text string, now time.Time) (float64, bool) {
	t.Helper()
	d, fired, err := p.Observe(v, importance, text, now)
	if err != nil {
		t.Fatal(err)
	}
	return d, fired
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
