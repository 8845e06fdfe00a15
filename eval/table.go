package eval

import (
	"fmt"
	"io"
	"sort"
)

// WriteTable prints a report as a table: one row per category and one for
// all questions, then latency, importance AUC and the tier walk. A metric
// that no question of a row defines shows as "-".
func WriteTable(w io.Writer, rep *Report) error {
	ew := &errWriter{w: w}
	switch rep.Benchmark {
	case "longmemeval":
		ew.printf("%d haystacks, %d records, %d questions (%d abstention or without answer sessions skipped)\n",
			rep.Conversations, rep.Records, rep.Overall.Questions, rep.Skipped)
	default:
		ew.printf("%d conversations, %d records, %d questions (%d without evidence skipped)\n",
			rep.Conversations, rep.Records, rep.Overall.Questions, rep.Skipped)
	}
	width := 12
	for n := range rep.ByCategory {
		width = max(width, len(n))
	}
	ew.printf("%-*s %5s", width, "category", "n")
	for _, m := range MetricNames {
		ew.printf(" %7s", MetricLabel(m))
	}
	ew.printf("\n")
	row := func(name string, m *Metrics) {
		ew.printf("%-*s %5d", width, name, m.Questions)
		for _, k := range MetricNames {
			if v, ok := m.Value(k); ok {
				ew.printf(" %7.3f", v)
			} else {
				ew.printf(" %7s", "-")
			}
		}
		ew.printf("\n")
	}
	for _, n := range sortedKeys(rep.ByCategory) {
		row(n, rep.ByCategory[n])
	}
	row(Overall, &rep.Overall)
	ew.printf("latency per query: median %.2f ms, p99 %.2f ms; ingest %.1f s\n", rep.MedianLatencyMS, rep.P99LatencyMS, rep.IngestSeconds)
	ew.printf("importance AUC (I0, evidence turns vs the rest): %.3f\n", rep.ImportanceAUC)
	if t := rep.Tiers; t != nil {
		ew.printf("tiers: %d queries served by tier 1/2/3: %d/%d/%d (tier-3 share %.2f); %.0f candidates scored per query; %d gate firings\n",
			t.Queries, t.Served[1], t.Served[2], t.Served[3], t.Tier3Share, t.CandidatesPerQuery, t.GateFirings)
	}
	return ew.err
}

// WriteComparison prints a comparison: per group (overall first, then the
// categories) and metric, the baseline's and the run's means over the
// paired questions, the difference and its interval; "*" marks an
// interval that excludes 0.
func WriteComparison(w io.Writer, c *Comparison) error {
	ew := &errWriter{w: w}
	name := c.Baseline
	if name == "" {
		name = "the baseline"
	}
	ew.printf("paired bootstrap against %s: %d questions paired (%d only in the baseline, %d only in this run), %d resamples",
		name, c.Paired, c.OnlyBaseline, c.OnlyRun, c.Resamples)
	if c.Seed != 0 {
		ew.printf(", seed %d", c.Seed)
	}
	ew.printf(", %.0f%% percentile intervals\n", 100*c.Level)
	groups := []string{Overall}
	width := len(Overall)
	for _, g := range sortedKeys(c.Groups) {
		width = max(width, len(g))
		if g != Overall {
			groups = append(groups, g)
		}
	}
	ew.printf("%-*s %-8s %5s %8s %8s %8s  %s\n", width, "category", "metric", "n", "baseline", "run", "delta", "95% interval")
	for _, g := range groups {
		for _, m := range MetricNames {
			iv, ok := c.Groups[g][m]
			if !ok {
				continue
			}
			mark := ""
			if iv.Lo > 0 || iv.Hi < 0 {
				mark = " *"
			}
			ew.printf("%-*s %-8s %5d %8.3f %8.3f %+8.3f  [%+.3f, %+.3f]%s\n", width, g, MetricLabel(m), iv.N,
				iv.Baseline, iv.Run, iv.Delta, iv.Lo, iv.Hi, mark)
		}
	}
	return ew.err
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}
