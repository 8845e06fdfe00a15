// Package peers is the peers benchmark of issue 11 (make bench-peers): hmo
// against LanceDB, SQLite FTS5 + sqlite-vec as OpenClaw's memory index uses
// them, chromem-go and an exact vek32 scan, on one workload. This file
// holds the results' format, their merging over rounds and the table; the
// harness is peers_test.go, the Node engines lancedb.mjs and sqlite.mjs.
package peers

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Result is one engine's report from one process: an ingest (IngestRPS,
// DiskMB) or a query round (the rest). Engines print it as one JSON line
// prefixed by "RESULT ".
type Result struct {
	Engine    string  `json:"engine"`
	IngestRPS float64 `json:"ingest_rps,omitempty"`
	ImportRPS float64 `json:"import_rps,omitempty"` // hmo import (the CLI), records/s
	DiskMB    float64 `json:"disk_mb,omitempty"`
	ColdMs    float64 `json:"cold_ms,omitempty"` // open + first query, in the querying process
	RSSMB     float64 `json:"rss_mb,omitempty"`  // VmRSS of the querying process after the queries
	// AnonMB is the anonymous share of RSSMB (RssAnon: heap, stacks, not
	// the page cache of mapped files), read with it.
	AnonMB   float64   `json:"anon_mb,omitempty"`
	HybridMs []float64 `json:"hybrid_ms,omitempty"`
	VectorMs []float64 `json:"vector_ms,omitempty"`
	TextMs   []float64 `json:"text_ms,omitempty"`
	// VectorTop holds, per query, the ten record positions of the vector
	// side (for recall@10 against the exact scan).
	VectorTop [][]int `json:"vector_top,omitempty"`
	// NeedleHits counts needle queries whose planted record is in the
	// hybrid top 10 (text top 10 for engines without hybrid).
	NeedleHits int `json:"needle_hits,omitempty"`
	Needles    int `json:"needles,omitempty"`
}

// ParseResults reads the RESULT lines of an engine's output; other lines
// (progress, warnings) are skipped.
func ParseResults(r io.Reader) ([]Result, error) {
	var out []Result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "RESULT ")
		if !ok {
			continue
		}
		var res Result
		if err := json.Unmarshal([]byte(line), &res); err != nil {
			return nil, fmt.Errorf("peers: result line: %w", err)
		}
		if res.Engine == "" {
			return nil, fmt.Errorf("peers: result line without an engine")
		}
		out = append(out, res)
	}
	return out, sc.Err()
}

// Summary is one engine's figures over all rounds.
type Summary struct {
	Engine               string
	IngestRPS, ImportRPS float64
	DiskMB               float64
	ColdMs, RSSMB        float64 // medians over rounds
	AnonMB               float64 // median over rounds; NaN = not measured
	Hybrid, Vector, Text float64 // median latency over all queries of all rounds, ms; NaN = not measured
	Recall10             float64 // vector recall@10 against the exact scan; NaN = not measured
	NeedleHit10          float64 // NaN = not measured
}

// MarshalJSON writes figures that were not measured (NaN) as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	f := func(v float64) *float64 {
		if math.IsNaN(v) {
			return nil
		}
		return &v
	}
	return json.Marshal(map[string]any{
		"engine": s.Engine, "ingest_rps": f(s.IngestRPS), "import_rps": f(s.ImportRPS), "disk_mb": f(s.DiskMB),
		"cold_ms": f(s.ColdMs), "rss_mb": f(s.RSSMB), "anon_mb": f(s.AnonMB), "hybrid_ms": f(s.Hybrid),
		"vector_ms": f(s.Vector), "text_ms": f(s.Text), "recall10": f(s.Recall10),
		"needle_hit10": f(s.NeedleHit10),
	})
}

// Summarise merges the results of each engine, in the order engines first
// appear. exact names the engine whose vector answers are the truth.
func Summarise(results []Result, exact string) []Summary {
	var order []string
	by := map[string][]Result{}
	for _, r := range results {
		if _, ok := by[r.Engine]; !ok {
			order = append(order, r.Engine)
		}
		by[r.Engine] = append(by[r.Engine], r)
	}
	var truth [][]int
	for _, r := range by[exact] {
		if len(r.VectorTop) > 0 {
			truth = r.VectorTop
			break
		}
	}
	out := make([]Summary, 0, len(order))
	for _, name := range order {
		s := Summary{Engine: name, Recall10: math.NaN(), NeedleHit10: math.NaN()}
		var cold, rss, anon, hyb, vec, txt []float64
		hits, needles := 0, 0
		for _, r := range by[name] {
			s.IngestRPS = max(s.IngestRPS, r.IngestRPS)
			s.ImportRPS = max(s.ImportRPS, r.ImportRPS)
			s.DiskMB = max(s.DiskMB, r.DiskMB)
			if r.ColdMs > 0 {
				cold = append(cold, r.ColdMs)
			}
			if r.RSSMB > 0 {
				rss = append(rss, r.RSSMB)
			}
			if r.AnonMB > 0 {
				anon = append(anon, r.AnonMB)
			}
			hyb, vec, txt = append(hyb, r.HybridMs...), append(vec, r.VectorMs...), append(txt, r.TextMs...)
			if len(r.VectorTop) > 0 && truth != nil && math.IsNaN(s.Recall10) {
				s.Recall10 = recall(r.VectorTop, truth)
			}
			hits, needles = hits+r.NeedleHits, needles+r.Needles
		}
		s.ColdMs, s.RSSMB, s.AnonMB = Median(cold), Median(rss), Median(anon)
		s.Hybrid, s.Vector, s.Text = Median(hyb), Median(vec), Median(txt)
		if needles > 0 {
			s.NeedleHit10 = float64(hits) / float64(needles)
		}
		out = append(out, s)
	}
	return out
}

// recall is the mean share of the truth's top 10 found in got's.
func recall(got, truth [][]int) float64 {
	n, sum := min(len(got), len(truth)), 0.0
	if n == 0 {
		return math.NaN()
	}
	for i := range n {
		found := 0
		for _, id := range got[i] {
			if slices.Contains(truth[i], id) {
				found++
			}
		}
		sum += float64(found) / float64(max(1, len(truth[i])))
	}
	return sum / float64(n)
}

// Median of xs; NaN for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Table writes a Markdown table of the summaries with a ratio to base
// (an engine name) after each figure of the others: "2.10 (0.5×)" means
// half of base's figure.
func Table(w io.Writer, sums []Summary, base string) {
	var b *Summary
	for i := range sums {
		if sums[i].Engine == base {
			b = &sums[i]
		}
	}
	rows := []struct {
		name   string
		digits int
		get    func(Summary) float64
	}{
		{"ingest, records/s", 0, func(s Summary) float64 { return s.IngestRPS }},
		{"hmo import (CLI), records/s", 0, func(s Summary) float64 { return s.ImportRPS }},
		{"hybrid median, ms", 2, func(s Summary) float64 { return s.Hybrid }},
		{"vector median, ms", 2, func(s Summary) float64 { return s.Vector }},
		{"text median, ms", 2, func(s Summary) float64 { return s.Text }},
		{"vector recall@10 vs exact", 2, func(s Summary) float64 { return s.Recall10 }},
		{"needle hit@10", 2, func(s Summary) float64 { return s.NeedleHit10 }},
		{"cold open + first query, ms", 0, func(s Summary) float64 { return s.ColdMs }},
		{"RSS of the querying process, MB", 0, func(s Summary) float64 { return s.RSSMB }},
		{"of which anonymous, MB", 0, func(s Summary) float64 { return s.AnonMB }},
		{"disk, MB", 0, func(s Summary) float64 { return s.DiskMB }},
	}
	fmt.Fprint(w, "| |")
	for _, s := range sums {
		fmt.Fprintf(w, " %s |", s.Engine)
	}
	fmt.Fprint(w, "\n|---|")
	for range sums {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |", r.name)
		for _, s := range sums {
			v := r.get(s)
			cell := "–"
			if !math.IsNaN(v) && v != 0 {
				cell = fmt.Sprintf("%.*f", r.digits, v)
				if b != nil && s.Engine != b.Engine {
					if bv := r.get(*b); !math.IsNaN(bv) && bv != 0 {
						cell += fmt.Sprintf(" (%.2f×)", v/bv)
					}
				}
			}
			fmt.Fprintf(w, " %s |", cell)
		}
		fmt.Fprintln(w)
	}
}
