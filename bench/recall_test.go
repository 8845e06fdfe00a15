package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/synth"
)

const ingestBatch = 2000

var (
	workDir string
	stores  sync.Map // records -> *built
)

type built struct {
	once    sync.Once
	e       *engine.Engine
	needles []synth.Needle
	ids     []uint64 // the record id of each stream position: identical texts are stored once
	ingest  time.Duration
	catchUp time.Duration // first archive query: the vector index opens and catches up
	err     error
}

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "hmo-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	workDir = d
	code := m.Run()
	stores.Range(func(_, v any) bool {
		if b := v.(*built); b.e != nil {
			b.e.Close()
		}
		return true
	})
	locomoBuilt.Range(func(_, v any) bool {
		for _, e := range v.(*locomoStores).es {
			e.Close()
		}
		return true
	})
	os.RemoveAll(d)
	os.Exit(code)
}

// store builds (once per process) a flat-mode store of n synthetic records.
func store(b *testing.B, n int) *built {
	return storeMode(b, n, engine.ModeFlat)
}

// storeMode builds (once per process and mode) a store of n synthetic records.
func storeMode(b *testing.B, n int, mode engine.Mode) *built {
	v, _ := stores.LoadOrStore(fmt.Sprint(n, mode), &built{})
	s := v.(*built)
	s.once.Do(func() {
		stream := synth.New(synth.Options{Seed: 42, Records: n})
		s.needles = stream.Needles()
		// Flat mode: every query searches the whole archive (hybrid BM25 +
		// HNSW), the worst case the tiers exist to avoid.
		s.e, s.err = hmo.Open(filepath.Join(workDir, fmt.Sprint(n, mode)), &engine.Options{Mode: mode})
		if s.err != nil {
			return
		}
		start := time.Now()
		for batch := stream.Next(ingestBatch); batch != nil; batch = stream.Next(ingestBatch) {
			var ids []uint64
			if ids, s.err = s.e.Remember(context.Background(), batch...); s.err != nil {
				return
			}
			s.ids = append(s.ids, ids...)
		}
		s.ingest = time.Since(start)
		// The archive's vector index opens and catches up on first use:
		// do that before the timed queries.
		start = time.Now()
		_, s.err = s.e.Recall(context.Background(), engine.Query{Text: "warm up", K: 10})
		s.catchUp = time.Since(start)
	})
	if s.err != nil {
		b.Fatalf("build %d-record store: %v", n, s.err)
	}
	return s
}

// BenchmarkRecall measures Recall (k=10, hybrid, embedded embedder, flat
// mode) on stores of 10K and 100K records, alternating everyday queries and needle
// queries, and reports the median and p99 latency and the needle hit rate.
func BenchmarkRecall(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			s := store(b, n)
			queries := synth.Queries(7, 100)
			lat := make([]time.Duration, 0, b.N)
			hits, asked := 0, 0
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				q := queries[i%len(queries)]
				var want uint64
				needle := i%2 == 1
				if needle {
					nd := s.needles[(i/2)%len(s.needles)]
					q, want = nd.Query, s.ids[nd.Index]
				}
				t0 := time.Now()
				res, err := s.e.Recall(context.Background(), engine.Query{Text: q, K: 10})
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if needle {
					asked++
					for _, r := range res {
						if r.Record.ID == want {
							hits++
							break
						}
					}
				}
			}
			b.StopTimer()
			b.ReportMetric(ms(cpuTime()-cpu0)/float64(b.N), "cpu-ms/query")
			slices.Sort(lat)
			b.ReportMetric(ms(lat[len(lat)/2]), "median-ms")
			b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
			if asked > 0 {
				b.ReportMetric(float64(hits)/float64(asked), "needle-hit@10")
			}
			b.ReportMetric(float64(n)/s.ingest.Seconds(), "ingest-rec/s")
			b.ReportMetric(s.catchUp.Seconds(), "vector-catchup-s")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// benchSizes are the store sizes benchmarked; HMO_BENCH_SIZES overrides
// (comma-separated record counts).
func benchSizes() []int {
	v := os.Getenv("HMO_BENCH_SIZES")
	if v == "" {
		return []int{10_000, 100_000}
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}
