package persona

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
	"unicode/utf8"
)

// Persona is the user's persona: a unit vector p with its drift-gate
// anchor, an extractive text profile and the history of gate firings.
//
// A Persona is safe for concurrent use: Observe and UnmarshalBinary take
// a write lock, the other methods a read lock.
type Persona struct {
	opts Options // filled in by New; immutable
	lim  limits  // resolved counts of opts; immutable

	mu         sync.RWMutex         // guards the fields below
	dims       int                  // 0 until the first vector (unless Options.Dims)
	p, anchor  []float64            // unit vectors; nil before the first update
	anchorTime time.Time            // now of the last firing (UTC)
	updates    uint64               // Observe calls that succeeded
	firings    uint64               // gate firings
	terms      map[string]*termStat // tracked terms
	scale      float64              // term weight = raw·scale
	stmts      []Statement          // ranked, at most lim.statements
	history    []Snapshot           // oldest first, at most lim.history
	// Observe's scratch, which nothing else references: the record's
	// unit vector, and the array the next p is computed in (the last p's
	// once a new one replaces it).
	unitBuf, spare []float64
}

// New returns an empty persona. A nil opts means all defaults.
func New(opts *Options) (*Persona, error) {
	o, l, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Persona{opts: o, lim: l, dims: o.Dims, terms: map[string]*termStat{}, scale: 1}, nil
}

// Options returns the options in effect: defaults filled in, a count that
// is none reported as -1, so that New(&o) behaves the same.
func (p *Persona) Options() Options { return p.opts }

// Observe folds one record into the persona: its embedding vec (any
// non-zero length; it is normalised), its importance I0 on [0, 10] and its
// text, at time now. With w = importance/10 and η = Options.Rate:
//
//	p ← normalise((1 − η·w)·p + η·w·vec/|vec|)
//
// and every profile term weight t ← (1 − η·w)·t + η·w·[text mentions
// the term]; a record with importance >= StatementMin offers its text as
// a statement. (If the sum is the zero vector, p is left as it was.)
//
// Then the drift gate (Eq. 6): drift d = 1 − cos(p, anchor); if d >
// Delta, or GateOff is set, the gate fires: fired is true (the caller
// re-scores tiers 1 and 2), the anchor becomes p, its time now, the
// firing count grows by one and a Snapshot is kept. Observe returns d,
// measured before the anchor moves.
//
// The first update sets p and the anchor to vec's direction and counts as
// a firing with drift 1: every alignment S_p changed from 0 (no persona)
// to a real value, so the active tiers need their first re-scoring.
//
// A vector of the wrong length (ErrDims), with NaN, infinite or only zero
// components (ErrInvalidVector), an importance outside [0, 10]
// (ErrInvalidImportance) or invalid UTF-8 (ErrInvalidText) is an error
// and changes nothing.
func (p *Persona) Observe(vec []float32, importance float64, text string, now time.Time) (drift float64, fired bool, err error) {
	if math.IsNaN(importance) || importance < 0 || importance > 10 {
		return 0, false, fmt.Errorf("%w: %v", ErrInvalidImportance, importance)
	}
	if !utf8.ValidString(text) {
		return 0, false, ErrInvalidText
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e, err := p.unitInto(p.unitBuf, vec)
	if err != nil {
		return 0, false, err
	}
	w := importance / 10
	x := p.opts.Rate * w
	p.updates++
	if p.p == nil {
		p.dims = len(e)
		p.p = e
		p.unitBuf = nil // e is p now
		drift = 1
	} else {
		p.unitBuf = e
		q := p.spare
		if cap(q) < len(e) {
			q = make([]float64, len(e))
		}
		q = q[:len(e)]
		for i := range q {
			q[i] = (1-x)*p.p[i] + x*e[i]
		}
		if n := norm(q); n > 1e-12 {
			for i := range q {
				q[i] /= n
			}
			p.p, p.spare = q, p.p
		} else {
			p.spare = q
		}
		drift = driftOf(p.p, p.anchor)
	}
	p.observeTerms(text, x)
	p.observeStatement(text, importance, now)
	if p.anchor == nil || p.opts.GateOff || drift > p.opts.Delta {
		p.fire(drift, now)
		fired = true
	}
	return drift, fired, nil
}

// fire moves the anchor to p and records the firing.
func (p *Persona) fire(drift float64, now time.Time) {
	p.anchor = slices.Clone(p.p)
	p.anchorTime = now.UTC()
	p.firings++
	if p.lim.history == 0 {
		return
	}
	snap := Snapshot{Time: now.UTC(), Update: p.updates, Drift: drift, Terms: []string{}}
	for _, t := range p.topTerms(p.lim.historyTerms) {
		snap.Terms = append(snap.Terms, t.Text)
	}
	p.history = append(p.history, snap)
	if over := len(p.history) - p.lim.history; over > 0 {
		p.history = slices.Delete(p.history, 0, over)
	}
}

// unitInto validates vec against the persona's dimension and returns it
// normalised, in float64, in dst's array when it is large enough.
func (p *Persona) unitInto(dst []float64, vec []float32) ([]float64, error) {
	if len(vec) == 0 || len(vec) > MaxDims || (p.dims != 0 && len(vec) != p.dims) {
		return nil, fmt.Errorf("%w: got %d, want %d", ErrDims, len(vec), p.dims)
	}
	e := dst
	if cap(e) < len(vec) {
		e = make([]float64, len(vec))
	}
	e = e[:len(vec)]
	for i, v := range vec {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%w: component %d is %v", ErrInvalidVector, i, v)
		}
		e[i] = f
	}
	n := norm(e)
	if n == 0 || math.IsInf(n, 0) {
		return nil, fmt.Errorf("%w: norm %v", ErrInvalidVector, n)
	}
	for i := range e {
		e[i] /= n
	}
	return e, nil
}

// Vector returns a copy of p, or nil before the first update.
func (p *Persona) Vector() []float32 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.p == nil {
		return nil
	}
	out := make([]float32, len(p.p))
	for i, v := range p.p {
		out[i] = float32(v)
	}
	return out
}

// Alignment returns S_p = max(0, cos(vec, p)) on [0, 1]: the input of
// tiers.Priority. It is 0 before the first update and for a vector that
// Observe would reject (wrong length, NaN, zero).
func (p *Persona) Alignment(vec []float32) float64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.p == nil || len(vec) != len(p.p) {
		return 0
	}
	var dot, nn float64
	for i, v := range vec {
		f := float64(v)
		dot += f * p.p[i]
		nn += f * f
	}
	c := dot / math.Sqrt(nn)
	if math.IsNaN(c) || c <= 0 {
		return 0
	}
	return min(c, 1)
}

// Drift returns the current drift 1 − cos(p, anchor) on [0, 2]: 0 right
// after a firing and before the first update.
func (p *Persona) Drift() float64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.p == nil {
		return 0
	}
	return driftOf(p.p, p.anchor)
}

// Profile returns the text profile: the top MaxTerms terms and the
// statements.
func (p *Persona) Profile() Profile {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return Profile{Terms: p.topTerms(p.lim.terms), Statements: slices.Clone(p.stmts)}
}

// Firings returns the number of gate firings, the first update included.
func (p *Persona) Firings() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return int(p.firings)
}

// Updates returns the number of successful Observe calls.
func (p *Persona) Updates() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return int(p.updates)
}

// AnchorTime returns the time (UTC) of the last firing: the anchor's age
// is now minus it. Zero before the first update.
func (p *Persona) AnchorTime() time.Time {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.anchorTime
}

// History returns the snapshots of the last MaxHistory firings, oldest
// first.
func (p *Persona) History() []Snapshot {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]Snapshot, len(p.history))
	for i, s := range p.history {
		s.Terms = slices.Clone(s.Terms)
		out[i] = s
	}
	return out
}

// Dims returns the vector dimension, 0 while unset.
func (p *Persona) Dims() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.dims
}

func norm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

// driftOf is 1 − cos(a, b) for unit vectors, clamped to [0, 2].
func driftOf(a, b []float64) float64 {
	var dot float64
	for i := range a {
		dot += a[i] * b[i]
	}
	return min(max(1-dot, 0), 2)
}
