package bench_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
)

// envTierWalkDir names a scale store (HMO_BENCH_DIR/scale2-N, as
// BenchmarkScale leaves it) for BenchmarkTierWalk. Tiered recalls count
// accesses and move records between the tiers: give it a copy.
const envTierWalkDir = "HMO_TIERWALK_DIR"

// BenchmarkTierWalk runs the scale benchmark's query sets in one process,
// b.N times each, for CPU profiles (-cpuprofile) and CPU per query:
// "served" asks the recent records' texts the tiers answered (the scale
// benchmark's tier-served child), "workload/tiered" and "workload/flat"
// the peers' workload in both modes. It reports CPU and median wall time
// per query; the workload's tiered side also splits its median by where
// each query was answered.
func BenchmarkTierWalk(b *testing.B) {
	dir := os.Getenv(envTierWalkDir)
	if dir == "" {
		b.Skip(envTierWalkDir + " is not set")
	}
	positions, err := readPositions(dir)
	if err != nil {
		b.Fatal(err)
	}
	n := len(positions)
	recent, _, err := recentQueries(dir, n)
	if err != nil {
		b.Fatal(err)
	}
	wq, _, err := workload(dir, n)
	if err != nil {
		b.Fatal(err)
	}
	served, tier1 := tieredServed(b, dir, recent)
	b.Run("served", func(b *testing.B) { walkQueries(b, dir, engine.ModeTiered, served) })
	if len(tier1) > 0 {
		b.Run("served-tier1", func(b *testing.B) { walkQueries(b, dir, engine.ModeTiered, tier1) })
	}
	b.Run("workload/tiered", func(b *testing.B) { walkQueries(b, dir, engine.ModeTiered, wq) })
	b.Run("workload/flat", func(b *testing.B) { walkQueries(b, dir, engine.ModeFlat, wq) })
}

// tieredServed returns the queries a tiered engine answers from Tiers 1
// and 2, asking each once, and those of them Tier 1 answered alone (the
// median tier-served question is one: its cost is Tier 1's size).
func tieredServed(b *testing.B, dir string, qs []string) (served, tier1 []string) {
	e, err := hmo.Open(dir, &engine.Options{Mode: engine.ModeTiered})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for _, q := range qs {
		before := e.TierStats().Served[1]
		hits, err := e.Recall(context.Background(), engine.Query{Text: q, K: 10})
		if err != nil {
			b.Fatal(err)
		}
		if len(hits) > 0 && hits[0].Tier != engine.TierArchive {
			served = append(served, q)
			if e.TierStats().Served[1] > before {
				tier1 = append(tier1, q)
			}
		}
	}
	if len(served) == 0 {
		b.Fatal("the tiers answered none of the queries")
	}
	return served, tier1
}

func walkQueries(b *testing.B, dir string, mode engine.Mode, qs []string) {
	ctx := context.Background()
	e, err := hmo.Open(dir, &engine.Options{Mode: mode})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Recall(ctx, engine.Query{Text: qs[0], K: 10}); err != nil {
		b.Fatal(err)
	}
	var lat, tierLat, archLat []time.Duration
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := range b.N {
		for _, q := range qs {
			t0 := time.Now()
			hits, err := e.Recall(ctx, engine.Query{Text: q, K: 10})
			d := time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			lat = append(lat, d)
			if i == 0 && mode == engine.ModeTiered {
				if len(hits) > 0 && hits[0].Tier != engine.TierArchive {
					tierLat = append(tierLat, d)
				} else {
					archLat = append(archLat, d)
				}
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(ms(cpuTime()-cpu0)/float64(len(lat)), "cpu-ms/query")
	b.ReportMetric(medianMs(lat), "median-ms")
	b.ReportMetric(float64(len(qs)), "questions")
	if len(tierLat) > 0 {
		b.ReportMetric(medianMs(tierLat), "tier-median-ms")
		b.ReportMetric(float64(len(tierLat))/float64(len(qs)), "tier-share")
	}
	if len(archLat) > 0 {
		b.ReportMetric(medianMs(archLat), "archive-median-ms")
	}
}

func medianMs(d []time.Duration) float64 {
	d = slices.Clone(d)
	slices.Sort(d)
	return ms(d[len(d)/2])
}
