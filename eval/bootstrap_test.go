package eval_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/eval"
)

// report builds a LoCoMo-style report whose question i (id "q<i>",
// category cats[i%len(cats)]) scores value(i) on every turn metric.
func report(n int, cats []string, value func(i int) float64) *eval.Report {
	rep := &eval.Report{Benchmark: "locomo"}
	for i := range n {
		v := value(i)
		rep.Questions = append(rep.Questions, &eval.QuestionResult{
			ID: fmt.Sprintf("q%d", i), Category: cats[i%len(cats)],
			Metrics: map[string]float64{eval.TurnR5: v, eval.TurnR10: v, eval.TurnR20: v, eval.AllHit: v},
		})
	}
	return rep
}

func TestCompareKnownAnswers(t *testing.T) {
	cats := []string{"multi-hop", "temporal"}
	noisy := func(i int) float64 { return float64((i*7919)%13) / 13 }
	tests := []struct {
		name  string
		run   func(i int) float64
		delta float64
	}{
		// Identical runs: every resample's mean difference is 0.
		{"identical", noisy, 0},
		// A constant shift: every resample's mean difference is the shift.
		{"shift up", func(i int) float64 { return noisy(i) + 0.125 }, 0.125},
		{"shift down", func(i int) float64 { return noisy(i) - 0.25 }, -0.25},
	}
	base := report(200, cats, noisy)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := eval.Compare(base, report(200, cats, tt.run), eval.CompareOptions{})
			if err != nil {
				t.Fatalf("Compare: %v", err)
			}
			if c.Paired != 200 || c.Resamples != eval.DefaultResamples || c.Seed != eval.DefaultSeed || c.Level != 0.95 {
				t.Errorf("paired %d resamples %d seed %d level %v, want 200, %d, %d, 0.95",
					c.Paired, c.Resamples, c.Seed, c.Level, eval.DefaultResamples, eval.DefaultSeed)
			}
			for _, g := range []string{eval.Overall, "multi-hop", "temporal"} {
				for _, m := range []string{eval.TurnR5, eval.TurnR10, eval.TurnR20, eval.AllHit} {
					iv, ok := c.Groups[g][m]
					if !ok {
						t.Fatalf("%s %s: no interval", g, m)
					}
					for name, v := range map[string]float64{"delta": iv.Delta, "lo": iv.Lo, "hi": iv.Hi} {
						if math.Abs(v-tt.delta) > 1e-12 {
							t.Errorf("%s %s: %s = %v, want %v", g, m, name, v, tt.delta)
						}
					}
					if wantN := map[string]int{eval.Overall: 200}[g]; wantN != 0 && iv.N != wantN || wantN == 0 && iv.N != 100 {
						t.Errorf("%s %s: n = %d", g, m, iv.N)
					}
				}
				// Session metrics are defined by no question: no interval.
				if _, ok := c.Groups[g][eval.SessionAll5]; ok {
					t.Errorf("%s: an interval for a metric no question defines", g)
				}
			}
		})
	}
}

// TestPairedBootstrapWidth checks the interval against the normal
// approximation: 400 differences, half 0 and half 1, have mean 0.5 and
// standard error 0.5/√400 = 0.025, so the 95% interval is close to
// 0.5 ± 1.96·0.025 = [0.451, 0.549].
func TestPairedBootstrapWidth(t *testing.T) {
	base := make([]float64, 400)
	run := make([]float64, 400)
	for i := range run {
		run[i] = float64(i % 2)
	}
	iv := eval.PairedBootstrap(base, run, 4000, rand.New(rand.NewPCG(7, 0)))
	if iv.N != 400 || iv.Baseline != 0 || iv.Run != 0.5 || iv.Delta != 0.5 {
		t.Errorf("interval %+v, want n 400, baseline 0, run 0.5, delta 0.5", iv)
	}
	if math.Abs(iv.Lo-0.451) > 0.006 || math.Abs(iv.Hi-0.549) > 0.006 {
		t.Errorf("interval [%.4f, %.4f], want about [0.451, 0.549]", iv.Lo, iv.Hi)
	}
	// One seed gives one interval; another gives another.
	again := eval.PairedBootstrap(base, run, 4000, rand.New(rand.NewPCG(7, 0)))
	other := eval.PairedBootstrap(base, run, 4000, rand.New(rand.NewPCG(8, 0)))
	if again != iv {
		t.Errorf("same seed: %+v then %+v", iv, again)
	}
	if other == iv {
		t.Errorf("seeds 7 and 8 gave the same interval %+v", iv)
	}
}

func TestComparePairing(t *testing.T) {
	base := report(10, []string{"a"}, func(int) float64 { return 0 })
	run := report(12, []string{"a"}, func(int) float64 { return 1 })
	run.Questions = run.Questions[2:] // q2..q11: q0, q1 only in the baseline, q10, q11 only in the run
	// q5 of the run defines a session metric the baseline's q5 lacks: it
	// cannot pair on that metric.
	run.Questions[3].Metrics[eval.SessionAll5] = 1
	delete(run.Questions[4].Metrics, eval.TurnR5) // q6 pairs on the other metrics only
	c, err := eval.Compare(base, run, eval.CompareOptions{Seed: 3, Resamples: 1000})
	if err != nil {
		t.Fatalf("Compare: %v", err)
	}
	if c.Paired != 8 || c.OnlyBaseline != 2 || c.OnlyRun != 2 || c.Seed != 3 || c.Resamples != 1000 {
		t.Errorf("paired %d, only baseline %d, only run %d, seed %d, resamples %d; want 8, 2, 2, 3, 1000",
			c.Paired, c.OnlyBaseline, c.OnlyRun, c.Seed, c.Resamples)
	}
	if n := c.Groups[eval.Overall][eval.TurnR5].N; n != 7 {
		t.Errorf("R@5 paired over %d questions, want 7", n)
	}
	if n := c.Groups["a"][eval.TurnR10].N; n != 8 {
		t.Errorf("R@10 paired over %d questions, want 8", n)
	}
	if _, ok := c.Groups[eval.Overall][eval.SessionAll5]; ok {
		t.Error("a metric only the run defines was compared")
	}
	// An injected generator replaces the seed.
	c, err = eval.Compare(base, run, eval.CompareOptions{Rand: rand.New(rand.NewPCG(1, 2))})
	if err != nil || c.Seed != 0 {
		t.Errorf("Compare with Rand: seed %v, err %v; want seed 0 (not used)", c.Seed, err)
	}
}

func TestCompareErrors(t *testing.T) {
	one := report(3, []string{"a"}, func(int) float64 { return 1 })
	other := report(3, []string{"a"}, func(int) float64 { return 1 })
	for _, q := range other.Questions {
		q.ID = "x" + q.ID
	}
	lme := report(3, []string{"a"}, func(int) float64 { return 1 })
	lme.Benchmark = "longmemeval"
	tests := []struct {
		name      string
		base, run *eval.Report
		o         eval.CompareOptions
		sentinel  error
		msg       string
	}{
		{"no shared question", one, other, eval.CompareOptions{}, eval.ErrBaseline, "shares no question"},
		{"other benchmark", lme, one, eval.CompareOptions{}, eval.ErrBaseline, "a longmemeval baseline for a locomo run"},
		{"empty baseline", &eval.Report{}, one, eval.CompareOptions{}, eval.ErrBaseline, "shares no question"},
		{"too few resamples", one, one, eval.CompareOptions{Resamples: 999}, nil, "at least 1000"},
	}
	for _, tt := range tests {
		_, err := eval.Compare(tt.base, tt.run, tt.o)
		if err == nil {
			t.Errorf("%s: Compare succeeded, want an error", tt.name)
			continue
		}
		if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.sentinel)
		}
		if !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: error %q, want it to mention %q", tt.name, err, tt.msg)
		}
	}
}

func TestReadReport(t *testing.T) {
	tests := []struct {
		name, data string
		msg        string
	}{
		{"not JSON", "R@10 0.69", "invalid character"},
		{"no per-question results", `{"benchmark":"locomo","overall":{"questions":3}}`, "no per-question results"},
		{"questions not a list", `{"questions":{"id":"a"}}`, "cannot unmarshal"},
	}
	for _, tt := range tests {
		_, err := eval.ReadReport(strings.NewReader(tt.data))
		if !errors.Is(err, eval.ErrBaseline) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: ReadReport error %v, want ErrBaseline mentioning %q", tt.name, err, tt.msg)
		}
	}
	rep, err := eval.ReadReport(strings.NewReader(`{"benchmark":"locomo","questions":[{"id":"c:q1","category":"temporal","metrics":{"turn_r10":0.5}}]}`))
	if err != nil || len(rep.Questions) != 1 || rep.Questions[0].Metrics[eval.TurnR10] != 0.5 {
		t.Errorf("ReadReport = %+v, %v", rep, err)
	}
}
