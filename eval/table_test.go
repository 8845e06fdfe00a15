package eval_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/hmo-dev/hmo/eval"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./eval/ -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test ./eval/ -run %s -update rewrites it)\n got:\n%s\nwant:\n%s", path, t.Name(), got, want)
	}
}

// sample is a fixed report: two categories, one without evidence turns.
func sample(benchmark string) *eval.Report {
	return &eval.Report{
		Benchmark: benchmark, Conversations: 3, Records: 120, Skipped: 2,
		Overall: eval.Metrics{Questions: 5, TurnQuestions: 3, TurnRecall: map[int]float64{5: 0.5, 10: 2.0 / 3, 20: 1},
			AllHit10: 1.0 / 3, SessionQuestions: 5, SessionRecall: 0.8, SessionAll5: 0.6, SessionNDCG5: 0.71234},
		ByCategory: map[string]*eval.Metrics{
			"single-session-preference": {Questions: 2, TurnRecall: map[int]float64{}, SessionQuestions: 2,
				SessionRecall: 1, SessionAll5: 1, SessionNDCG5: 0.815464},
			"multi-session": {Questions: 3, TurnQuestions: 3, TurnRecall: map[int]float64{5: 0.5, 10: 2.0 / 3, 20: 1},
				AllHit10: 1.0 / 3, SessionQuestions: 3, SessionRecall: 2.0 / 3, SessionAll5: 1.0 / 3, SessionNDCG5: 0.643},
		},
		MedianLatencyMS: 1.25, P99LatencyMS: 4.5, IngestSeconds: 12.34, ImportanceAUC: 0.61,
		Tiers: &eval.TierReport{Queries: 5, Served: [4]uint64{0, 1, 3, 1}, Tier3Share: 0.2, CandidatesPerQuery: 41.6, GateFirings: 2},
	}
}

func TestWriteTable(t *testing.T) {
	for _, bench := range []string{"locomo", "longmemeval"} {
		t.Run(bench, func(t *testing.T) {
			var b bytes.Buffer
			if err := eval.WriteTable(&b, sample(bench)); err != nil {
				t.Fatal(err)
			}
			golden(t, "table-"+bench+".golden", b.Bytes())
		})
	}
}

func TestWriteComparison(t *testing.T) {
	cats := []string{"multi-hop", "temporal", "single-hop"}
	base := report(60, cats, func(i int) float64 { return float64(i%4) / 4 })
	// Every second question gains 0.25 where it can: a gain the
	// overall interval separates from 0.
	run := report(60, cats, func(i int) float64 { return min(1, float64(i%4)/4+0.25*float64(i%2)) })
	c, err := eval.Compare(base, run, eval.CompareOptions{Seed: 42, Resamples: 1000})
	if err != nil {
		t.Fatal(err)
	}
	c.Baseline = "base.json"
	var b bytes.Buffer
	if err := eval.WriteComparison(&b, c); err != nil {
		t.Fatal(err)
	}
	golden(t, "comparison.golden", b.Bytes())
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrors(t *testing.T) {
	if err := eval.WriteTable(failWriter{}, sample("locomo")); err == nil || err.Error() != "disk full" {
		t.Errorf("WriteTable to a failing writer: %v, want disk full", err)
	}
	c, _ := eval.Compare(sample("locomo"), sample("locomo"), eval.CompareOptions{})
	if c != nil {
		t.Error("Compare of reports without per-question results succeeded")
	}
	if err := eval.WriteComparison(failWriter{}, &eval.Comparison{}); err == nil {
		t.Error("WriteComparison to a failing writer succeeded")
	}
}
