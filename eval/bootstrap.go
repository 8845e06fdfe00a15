package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
)

// Sentinel errors of comparisons.
var (
	// ErrBaseline marks a baseline report that cannot be paired with a run.
	ErrBaseline = errors.New("eval: unusable baseline")
)

// Bootstrap defaults.
const (
	DefaultResamples = 2000
	DefaultSeed      = 1
	// Level is the coverage of the reported intervals.
	Level = 0.95
)

// CompareOptions configure Compare.
type CompareOptions struct {
	// Resamples is the number of bootstrap resamples, at least 1000.
	// Default DefaultResamples.
	Resamples int
	// Seed seeds the resampling (a PCG generator), so a comparison is
	// reproducible. Default DefaultSeed. Ignored when Rand is set.
	Seed uint64
	// Rand, when set, is the source of randomness instead of Seed.
	Rand *rand.Rand
}

// Comparison is a run compared with a baseline run of the same benchmark,
// question by question: for each metric, overall and per category, the
// mean paired difference (run minus baseline) with its 95% percentile
// bootstrap interval.
type Comparison struct {
	Baseline     string  `json:"baseline,omitempty"` // where the baseline came from, as the caller names it
	Paired       int     `json:"paired"`             // questions found in both runs
	OnlyBaseline int     `json:"only_baseline"`      // questions of the baseline the run did not ask
	OnlyRun      int     `json:"only_run"`           // questions of the run the baseline did not ask
	Resamples    int     `json:"resamples"`
	Seed         uint64  `json:"seed,omitempty"` // zero when the caller injected its own generator
	Level        float64 `json:"level"`
	// Groups maps "overall" and each category to metric name to interval.
	Groups map[string]map[string]Interval `json:"groups"`
}

// Interval is one metric's paired difference over a group of questions.
type Interval struct {
	N        int     `json:"n"`        // paired questions that define the metric
	Baseline float64 `json:"baseline"` // the baseline's mean over those questions
	Run      float64 `json:"run"`      // the run's mean over those questions
	Delta    float64 `json:"delta"`    // Run - Baseline
	Lo       float64 `json:"lo"`       // lower end of the interval of Delta
	Hi       float64 `json:"hi"`       // upper end
}

// Overall is the group name of all questions in Comparison.Groups.
const Overall = "overall"

// ReadReport reads a report written as JSON (hmo eval --json) to serve as
// a baseline. It must hold per-question results.
func ReadReport(r io.Reader) (*Report, error) {
	var rep Report
	dec := json.NewDecoder(r)
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBaseline, err)
	}
	if len(rep.Questions) == 0 {
		return nil, fmt.Errorf("%w: no per-question results (write it again with this version's --json)", ErrBaseline)
	}
	return &rep, nil
}

// Compare pairs the questions of run and base by id and bootstraps the
// mean difference of every metric, overall and per category (the run's
// category of each question). It fails with ErrBaseline when the two are
// of different benchmarks or share no question.
func Compare(base, run *Report, o CompareOptions) (*Comparison, error) {
	if o.Resamples == 0 {
		o.Resamples = DefaultResamples
	}
	if o.Resamples < 1000 {
		return nil, fmt.Errorf("eval: %d resamples: want at least 1000", o.Resamples)
	}
	if base.Benchmark != "" && run.Benchmark != "" && base.Benchmark != run.Benchmark {
		return nil, fmt.Errorf("%w: a %s baseline for a %s run", ErrBaseline, base.Benchmark, run.Benchmark)
	}
	c := &Comparison{Resamples: o.Resamples, Level: Level, Groups: map[string]map[string]Interval{}}
	rng := o.Rand
	if rng == nil {
		if o.Seed == 0 {
			o.Seed = DefaultSeed
		}
		c.Seed = o.Seed
		rng = rand.New(rand.NewPCG(o.Seed, 0))
	}
	byID := map[string]*QuestionResult{}
	for _, q := range base.Questions {
		byID[q.ID] = q
	}
	type pair struct{ base, run *QuestionResult }
	groups := map[string][]pair{}
	matched := map[string]bool{}
	for _, q := range run.Questions {
		b, ok := byID[q.ID]
		if !ok {
			c.OnlyRun++
			continue
		}
		matched[q.ID] = true
		p := pair{b, q}
		groups[Overall] = append(groups[Overall], p)
		groups[q.Category] = append(groups[q.Category], p)
	}
	c.Paired = len(groups[Overall])
	c.OnlyBaseline = len(byID) - len(matched)
	if c.Paired == 0 {
		return nil, fmt.Errorf("%w: it shares no question with this run", ErrBaseline)
	}
	// Groups and metrics in a fixed order, so one seed gives one result.
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	for _, g := range names {
		c.Groups[g] = map[string]Interval{}
		for _, m := range MetricNames {
			var bs, rs []float64
			for _, p := range groups[g] {
				bv, bok := p.base.Metrics[m]
				rv, rok := p.run.Metrics[m]
				if bok && rok {
					bs, rs = append(bs, bv), append(rs, rv)
				}
			}
			if len(bs) > 0 {
				c.Groups[g][m] = PairedBootstrap(bs, rs, o.Resamples, rng)
			}
		}
	}
	return c, nil
}

// PairedBootstrap returns the mean of run[i] - base[i] and its 95%
// percentile bootstrap interval: the 2.5th and 97.5th percentiles (linear
// interpolation between order statistics) of the mean difference over
// resamples of the pairs drawn with replacement from rng. base and run
// must be of equal, non-zero length.
func PairedBootstrap(base, run []float64, resamples int, rng *rand.Rand) Interval {
	n := len(base)
	d := make([]float64, n)
	iv := Interval{N: n}
	for i := range d {
		d[i] = run[i] - base[i]
		iv.Baseline += base[i]
		iv.Run += run[i]
	}
	iv.Baseline /= float64(n)
	iv.Run /= float64(n)
	iv.Delta = iv.Run - iv.Baseline
	means := make([]float64, resamples)
	for r := range means {
		var s float64
		for range n {
			s += d[rng.IntN(n)]
		}
		means[r] = s / float64(n)
	}
	sort.Float64s(means)
	alpha := (1 - Level) / 2
	iv.Lo, iv.Hi = quantile(means, alpha), quantile(means, 1-alpha)
	return iv
}

// quantile is the q-quantile of sorted xs, interpolating linearly between
// the order statistics around (len-1)·q.
func quantile(xs []float64, q float64) float64 {
	pos := q * float64(len(xs)-1)
	i := int(pos)
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	f := pos - float64(i)
	return xs[i] + f*(xs[i+1]-xs[i])
}
