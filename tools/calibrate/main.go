// Command calibrate fits the calibration of retrieve.Relevance on LoCoMo
// and checks it on held-out conversations. For every question of the fit
// conversations it recalls the top candidates and records their features
// (own-text coverage of the query's terms, lexical match, cosine z-score
// against the store's null) and whether each is evidence; a logistic
// regression on them gives the coefficients. On the check conversations
// it prints the reliability table: mean predicted relevance against the
// observed share of evidence, per bin, and the expected calibration error.
//
//	go run ./tools/calibrate -data ../shared/data/locomo-dev.json -fit 0-3 -check 4-6
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
	"github.com/hmo-dev/hmo/locomo"
	"github.com/hmo-dev/hmo/retrieve"
)

type sample struct {
	x   [nx]float64 // 1, own coverage, lexical, z, soft match
	y   float64
	rel float64 // the relevance the engine gave
}

func main() {
	data := flag.String("data", "../shared/data/locomo-dev.json", "LoCoMo file")
	fit := flag.String("fit", "0-3", "conversations (0-based range) to fit on")
	check := flag.String("check", "4-6", "conversations to check on")
	mode := flag.String("mode", "flat", "engine mode")
	k := flag.Int("k", 50, "candidates per question")
	flag.Parse()
	f, err := os.Open(*data)
	if err != nil {
		fail(err)
	}
	convs, err := locomo.Read(f)
	f.Close()
	if err != nil {
		fail(err)
	}
	fitSet, err := collect(convs, *fit, *mode, *k)
	if err != nil {
		fail(err)
	}
	checkSet, err := collect(convs, *check, *mode, *k)
	if err != nil {
		fail(err)
	}
	w := logistic(fitSet)
	fmt.Printf("fit on %d candidates (%d evidence): bias %.3f own %.3f lexical %.3f z %.3f soft %.3f\n",
		len(fitSet), positives(fitSet), w[0], w[1], w[2], w[3], w[4])
	fmt.Printf("check log-loss: fitted %.5f, as built %.5f\n", logLoss(checkSet, func(s sample) float64 { return sigmoid(dotw(w, s.x)) }), logLoss(checkSet, func(s sample) float64 { return s.rel }))
	fmt.Println("check (coefficients just fitted):")
	reliability(checkSet, func(s sample) float64 { return sigmoid(dotw(w, s.x)) })
	fmt.Println("check (the engine's Relevance as built):")
	reliability(checkSet, func(s sample) float64 { return s.rel })
	fmt.Println("check: what a min_score keeps (the engine's Relevance):")
	fmt.Printf("  %-9s %16s %16s\n", "min_score", "evidence kept", "others dropped")
	for _, t := range []float64{0.002, 0.003, 0.005, retrieve.DefaultMinScore, 0.0075, 0.01, 0.02, 0.05} {
		var ev, evKept, other, otherDropped float64
		for _, s := range checkSet {
			if s.y == 1 {
				ev++
				if s.rel >= t {
					evKept++
				}
			} else {
				other++
				if s.rel < t {
					otherDropped++
				}
			}
		}
		fmt.Printf("  %-9.4f %15.1f%% %15.1f%%\n", t, 100*evKept/ev, 100*otherDropped/other)
	}
}

// logLoss is the mean negative log-likelihood of the labels under pred.
func logLoss(ss []sample, pred func(sample) float64) float64 {
	var l float64
	for _, s := range ss {
		p := min(max(pred(s), 1e-12), 1-1e-12)
		l -= s.y*math.Log(p) + (1-s.y)*math.Log(1-p)
	}
	return l / float64(len(ss))
}

func positives(ss []sample) int {
	n := 0
	for _, s := range ss {
		if s.y == 1 {
			n++
		}
	}
	return n
}

func collect(convs []locomo.Conversation, span, mode string, k int) ([]sample, error) {
	lo, hi, err := parseSpan(span)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	work, err := os.MkdirTemp("", "hmo-calibrate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	var out []sample
	for i := lo; i <= hi && i < len(convs); i++ {
		c := convs[i]
		clock := &eval.Clock{}
		e, err := hmo.Open(filepath.Join(work, fmt.Sprint(i)), &engine.Options{Clock: clock.Now, Mode: engine.Mode(mode)})
		if err != nil {
			return nil, err
		}
		turnOf, err := eval.Ingest(ctx, e, c, clock)
		if err != nil {
			e.Close()
			return nil, err
		}
		for _, q := range c.QA {
			if q.Category == locomo.Adversarial || len(q.Evidence) == 0 {
				continue
			}
			res, err := e.Recall(ctx, engine.Query{Text: q.Question, K: k, Scope: c.ID, NoAccess: true})
			if err != nil {
				e.Close()
				return nil, err
			}
			terms := retrieve.ContentTerms(q.Question)
			for _, r := range res {
				s := sample{x: [nx]float64{1, retrieve.OwnCoverage(terms, r.Record.Text), b2f(r.TextScore > 0), r.VectorZ, r.SoftMatch}, rel: r.Relevance}
				if slices.Contains(q.Evidence, turnOf[r.Record.ID]) {
					s.y = 1
				}
				out = append(out, s)
			}
		}
		e.Close()
	}
	return out, nil
}

func parseSpan(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		b = a
	}
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || lo > hi {
		return 0, 0, fmt.Errorf("bad range %q", s)
	}
	return lo, hi, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func sigmoid(s float64) float64 { return 1 / (1 + math.Exp(-s)) }

// nx is the number of features, the constant 1 included.
const nx = 5

func dotw(w, x [nx]float64) float64 {
	var s float64
	for i := range w {
		s += w[i] * x[i]
	}
	return s
}

// logistic fits weights by Newton's method with a small ridge.
func logistic(ss []sample) [nx]float64 {
	var w [nx]float64
	for iter := 0; iter < 50; iter++ {
		var g [nx]float64
		var h [nx][nx]float64
		for _, s := range ss {
			p := sigmoid(dotw(w, s.x))
			for i := range nx {
				g[i] += (s.y - p) * s.x[i]
				for j := range nx {
					h[i][j] += p * (1 - p) * s.x[i] * s.x[j]
				}
			}
		}
		for i := range nx {
			g[i] -= 1e-3 * w[i]
			h[i][i] += 1e-3
		}
		d := solve(h, g)
		for i := range nx {
			w[i] += d[i]
		}
	}
	return w
}

// solve solves a x = b by Gaussian elimination with partial pivoting.
func solve(a [nx][nx]float64, b [nx]float64) [nx]float64 {
	n := nx
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		b[c], b[p] = b[p], b[c]
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k < n; k++ {
				a[r][k] -= f * a[c][k]
			}
			b[r] -= f * b[c]
		}
	}
	var x [nx]float64
	for r := n - 1; r >= 0; r-- {
		s := b[r]
		for k := r + 1; k < n; k++ {
			s -= a[r][k] * x[k]
		}
		x[r] = s / a[r][r]
	}
	return x
}

// reliability prints predicted against observed per bin and the ECE.
func reliability(ss []sample, pred func(sample) float64) {
	edges := []float64{0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 1.0001}
	type bin struct{ n, pos, sum float64 }
	bins := make([]bin, len(edges)-1)
	for _, s := range ss {
		p := pred(s)
		for i := range bins {
			if p >= edges[i] && p < edges[i+1] {
				bins[i].n++
				bins[i].pos += s.y
				bins[i].sum += p
			}
		}
	}
	var ece float64
	fmt.Printf("  %-12s %8s %10s %10s\n", "bin", "n", "predicted", "observed")
	for i, b := range bins {
		if b.n == 0 {
			continue
		}
		fmt.Printf("  [%.2f,%.2f) %8.0f %10.3f %10.3f\n", edges[i], math.Min(edges[i+1], 1), b.n, b.sum/b.n, b.pos/b.n)
		ece += b.n / float64(len(ss)) * math.Abs(b.sum/b.n-b.pos/b.n)
	}
	fmt.Printf("  ECE %.4f over %d candidates\n", ece, len(ss))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "calibrate:", err)
	os.Exit(1)
}
