package retrieve

import (
	"fmt"
	"math"
	"time"
)

// HMemOptions weigh H-Mem's temporal relevance T and robustness R
// (DESIGN.md section 9). H-Mem scores 0.70·S + 0.15·T + 0.15·R; here a
// stage adds its weight times its value in [0, 1] times the best fused
// score, so the paper's mix is a weight of 0.15/0.70 ≈ 0.21 each.
type HMemOptions struct {
	// Temporal is the weight of T. Default DefaultTemporalWeight.
	Temporal float64
	// Lambda splits T between interval overlap (Jaccard) and the
	// closeness of the intervals' centres in their hull. Default 0.5.
	Lambda float64
	// Robust is the weight of R. Default DefaultRobustWeight.
	Robust float64
	// Tau is R's time constant. Default 365 days.
	Tau time.Duration
	// Eta is R's access-count factor. Default 0.5.
	Eta float64
}

// Defaults of HMemOptions: the paper's.
const (
	DefaultTemporalWeight = 0.15 / 0.70
	DefaultRobustWeight   = 0.15 / 0.70
	DefaultLambda         = 0.5
	DefaultTau            = 365 * 24 * time.Hour
	DefaultEta            = 0.5
)

func (o *HMemOptions) withDefaults() {
	setDefault(&o.Temporal, DefaultTemporalWeight)
	setDefault(&o.Robust, DefaultRobustWeight)
	setDefault(&o.Lambda, DefaultLambda)
	setDefault(&o.Eta, DefaultEta)
	if o.Tau == 0 {
		o.Tau = DefaultTau
	}
}

func (o *HMemOptions) validate() error {
	if o.Temporal < 0 || o.Robust < 0 || o.Lambda < 0 || o.Lambda > 1 || o.Tau < 0 || o.Eta < 0 {
		return fmt.Errorf("%w: H-Mem weights out of range", ErrInvalidOption)
	}
	return nil
}

// TemporalRelevance is H-Mem's T of a memory interval m to a query
// interval k: λ·|m∩k|/|m∪k| + (1−λ)·(1 − |c_m−c_k|/|hull|), clamped to
// [0, 1]; 0 when either interval is unresolved.
func TemporalRelevance(m, k Span, lambda float64) float64 {
	if !m.Resolved() || !k.Resolved() {
		return 0
	}
	lo, hi := minTime(m.Start, k.Start), maxTime(m.End, k.End)
	hull := hi.Sub(lo).Seconds()
	if hull <= 0 {
		return 0
	}
	inter := minTime(m.End, k.End).Sub(maxTime(m.Start, k.Start)).Seconds()
	union := m.End.Sub(m.Start).Seconds() + k.End.Sub(k.Start).Seconds() - max(inter, 0)
	jac := 0.0
	if inter > 0 && union > 0 {
		jac = inter / union
	}
	cm := m.Start.Add(m.End.Sub(m.Start) / 2)
	ck := k.Start.Add(k.End.Sub(k.Start) / 2)
	closeness := 1 - math.Abs(cm.Sub(ck).Seconds())/hull
	return min(max(lambda*jac+(1-lambda)*closeness, 0), 1)
}

// Robustness is H-Mem's R of a memory dated at, seen n times, at now:
// exp(−(now − at) / (τ·(1 + η·ln(1 + n)))), in (0, 1]; 1 for a memory
// dated at or after now.
func Robustness(at, now time.Time, n int, tau time.Duration, eta float64) float64 {
	age := now.Sub(at)
	if age <= 0 || tau <= 0 {
		return 1
	}
	return math.Exp(-age.Seconds() / (tau.Seconds() * (1 + eta*math.Log1p(float64(max(n, 0))))))
}

// hmemScores adds T and R. T needs a question naming a time (resolved
// against q.Now) and compares it with the record's own day and the times
// its text names; R needs q.Now and decays with the age of the record's
// tree node (r_m, the latest record consolidated into it), slower the
// more records it holds (n_m); without a tree, with the record's own age
// and n_m = 0.
func (p *Pipeline) hmemScores(q *Query, cands []Candidate, src Source) error {
	var spans []Span
	if p.o.Stages.Has(StageTemporal) {
		spans = q.resolvedMentions()
	}
	useR := p.o.Stages.Has(StageRobust) && !q.Now.IsZero()
	if len(spans) == 0 && !useR {
		return nil
	}
	if err := loadDocs(cands, src); err != nil {
		return err
	}
	// R reads n_m and r_m from the tree when the source has one.
	var info []HTreeInfo
	if ts, ok := src.(HTreeSource); ok && useR {
		ids := make([]uint64, len(cands))
		for i := range cands {
			ids[i] = cands[i].ID
		}
		var err error
		if info, err = ts.HTreeInfo(ids); err != nil {
			return err
		}
	}
	scale := bestFused(cands)
	o := &p.o.HMem
	for i := range cands {
		d := cands[i].doc
		if d == nil || d.Time.IsZero() {
			continue
		}
		if len(spans) > 0 {
			// The record's day, then the times it mentions (no slice
			// of both: a maximum needs no order).
			day := time.Date(d.Time.Year(), d.Time.Month(), d.Time.Day(), 0, 0, 0, 0, time.UTC)
			own := Span{Start: day, End: day.AddDate(0, 0, 1)}
			mentions := d.mentions()
			t := 0.0
			for _, k := range spans {
				t = max(t, TemporalRelevance(own, k, o.Lambda))
				for _, m := range mentions {
					t = max(t, TemporalRelevance(m, k, o.Lambda))
				}
			}
			cands[i].Score += o.Temporal * t * scale
		}
		if useR {
			at, n := d.Time, 0
			if info != nil && info[i].N > 0 {
				at, n = info[i].Last, info[i].N
			}
			cands[i].Score += o.Robust * Robustness(at, q.Now, n, o.Tau, o.Eta) * scale
		}
	}
	return nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
