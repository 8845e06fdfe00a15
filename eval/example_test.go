package eval_test

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/hmo-dev/hmo/eval"
)

// A LongMemEval-style question: turn ids are "<session>_<n>"; both answer
// sessions are among the first five distinct sessions of the ranking.
func ExampleScoreRanking() {
	ranked := []string{"s4_2", "s1_3", "s4_1", "s2_1", "s7_5", "s3_2", "s9_1"}
	m := eval.ScoreRanking(ranked, eval.Evidence{
		Turns:     []string{"s1_3", "s9_1"},
		Sessions:  []string{"s1", "s9"},
		SessionOf: func(turn string) string { s, _, _ := strings.Cut(turn, "_"); return s },
	})
	for _, k := range eval.MetricNames {
		fmt.Printf("%s %.3f\n", eval.MetricLabel(k), m[k])
	}
	// Output:
	// R@5 0.500
	// R@10 1.000
	// R@20 1.000
	// hit@10 1.000
	// sessR@5 0.500
	// sAll@5 0.000
	// sNDCG@5 0.387
}

// Two runs differ by a constant: the interval has no width.
func ExamplePairedBootstrap() {
	base := []float64{0.2, 0.5, 0.9, 0.4}
	run := []float64{0.3, 0.6, 1.0, 0.5}
	iv := eval.PairedBootstrap(base, run, 1000, rand.New(rand.NewPCG(1, 0)))
	fmt.Printf("delta %+.2f [%+.2f, %+.2f]\n", iv.Delta, iv.Lo, iv.Hi)
	// Output:
	// delta +0.10 [+0.10, +0.10]
}
