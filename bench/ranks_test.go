package bench_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
)

// Environment of TestWorkloadRanks.
const (
	envRanksStore = "HMO_RANKS_STORE"      // a scale store (HMO_BENCH_DIR/scale2-N): the test runs only when set
	envRanksOut   = "HMO_RANKS_OUT"        // the file the rankings are written to
	envRanksMode  = "HMO_RANKS_MODE"       // flat (default) or tiered
	envRanksSize  = "HMO_RANKS_SIZE"       // the store's stream size, for the needles; default 100000
	envRanksCands = "HMO_RANKS_CANDIDATES" // engine.Options.Candidates; default the engine's
)

// TestWorkloadRanks writes the top 10 of the scale benchmark's 200
// workload queries (BenchmarkScale's wl- side) on the store
// HMO_RANKS_STORE to HMO_RANKS_OUT, one line a query: each hit's id,
// score to 9 digits and relevance. Two builds that rank alike write
// byte-identical files (compare them with cmp; run each on its own copy
// of the store: a tiered run changes the tiers). It prints the process
// CPU per query and the median latency, for a speed change's A/B. It
// is skipped unless HMO_RANKS_STORE is set.
func TestWorkloadRanks(t *testing.T) {
	dir := os.Getenv(envRanksStore)
	if dir == "" {
		t.Skip(envRanksStore + " not set")
	}
	n := 100000
	if v := os.Getenv(envRanksSize); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil {
			t.Fatalf("%s=%q: %v", envRanksSize, v, err)
		}
	}
	cands := 0
	if v := os.Getenv(envRanksCands); v != "" {
		if _, err := fmt.Sscan(v, &cands); err != nil {
			t.Fatalf("%s=%q: %v", envRanksCands, v, err)
		}
	}
	mode := engine.ModeFlat
	if os.Getenv(envRanksMode) == "tiered" {
		mode = engine.ModeTiered
	}
	qs, src, err := workload(dir, n)
	if err != nil {
		t.Fatal(err)
	}
	e, err := hmo.Open(dir, &engine.Options{Mode: mode, Candidates: cands})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	f, err := os.OpenFile(os.Getenv(envRanksOut), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	ctx := context.Background()
	lat := make([]time.Duration, 0, len(qs))
	found := 0
	c0 := cpuTime()
	for i, q := range qs {
		s := time.Now()
		hits, err := e.Recall(ctx, engine.Query{Text: q, K: 10})
		lat = append(lat, time.Since(s))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(w, "q%d", i)
		for _, h := range hits {
			fmt.Fprintf(w, " %d:%.9g:%.6g", h.Record.ID, h.Score, h.Relevance)
			if h.Record.ID == src[i] {
				found++
			}
		}
		fmt.Fprintln(w)
	}
	cpu := cpuTime() - c0
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(lat)
	t.Logf("%d queries (%s): CPU %.3f ms/query, median %.3f ms, needles in the top 10 %d",
		len(qs), mode, float64(cpu.Microseconds())/1000/float64(len(qs)), float64(lat[len(lat)/2].Microseconds())/1000, found)
}
