package hnsw_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/hnsw"
)

// benchSizes are the live-vector counts BenchmarkSearch measures. The
// exact scan and the graph are timed at each, which is what the
// DefaultExactBelow choice rests on.
var benchSizes = []int{5_000, 10_000, 20_000, 30_000, 40_000, 50_000, 100_000}

// BenchmarkSearch times k=10 searches over clustered 100-d unit vectors,
// on the graph (ExactBelow -1, default EfSearch, fetching k plus the
// oversampling margin) and by exact scan, at each of benchSizes. It grows
// one index through the sizes. The graph results report recall@10 against
// the exact scan over 200 queries, the cumulative build time, the Save
// time, the time to Open the saved index with its graph, the saved file
// sizes and the heap in use; the exact results the time to Open the saved
// index without its graph. Building 100K takes minutes; -short stops at
// 20K.
//
//	go test ./hnsw -run '^$' -bench BenchmarkSearch -timeout 1h
func BenchmarkSearch(b *testing.B) {
	const dims, k = 100, 10
	d := newDataset(1, dims, 100)
	qs := d.points(1000)
	g, dir := openIndex(b, dims, hnsw.Options{ExactBelow: -1})
	var build time.Duration
	for _, n := range benchSizes {
		if testing.Short() && n > 20_000 {
			break
		}
		have := g.Len()
		start := time.Now()
		for i := have; i < n; i += 1000 {
			mustApply(b, g, docs(uint64(i), d.points(min(1000, n-i))), nil, uint64(i))
		}
		build += time.Since(start)
		saveStart := time.Now()
		if err := g.Save(); err != nil {
			b.Fatalf("Save: %v", err)
		}
		saveTime := time.Since(saveStart)
		graphMB, metaMB := fileSizes(b, dir)
		heapMB := heapInUse()
		graphOpen := openTime(b, dir, -1)
		start = time.Now()
		e, err := hnsw.Open(dir, &hnsw.Options{Dims: dims, ExactBelow: 1 << 30})
		if err != nil {
			b.Fatalf("Open: %v", err)
		}
		exactOpen := time.Since(start)
		var sumRecall float64
		for _, q := range qs[:200] {
			sumRecall += recall(mustSearch(b, g, q, k), mustSearch(b, e, q, k))
		}
		b.Run(fmt.Sprintf("graph/%dK", n/1000), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				mustSearch(b, g, qs[i%len(qs)], k)
			}
			// After the loop: b.Loop's first call drops earlier metrics.
			b.ReportMetric(sumRecall/200, "recall@10")
			b.ReportMetric(build.Seconds(), "build-s")
			b.ReportMetric(saveTime.Seconds(), "save-s")
			b.ReportMetric(graphOpen.Seconds(), "open-s")
			b.ReportMetric(graphMB, "graph-MB")
			b.ReportMetric(metaMB, "meta-MB")
			b.ReportMetric(heapMB, "heap-MB")
		})
		b.Run(fmt.Sprintf("exact/%dK", n/1000), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				mustSearch(b, e, qs[i%len(qs)], k)
			}
			b.ReportMetric(exactOpen.Seconds(), "open-s")
		})
		if err := e.Close(); err != nil {
			b.Fatalf("Close: %v", err)
		}
	}
}

// openTime opens the index saved in dir with exactBelow, closes it and
// returns how long Open took.
func openTime(b *testing.B, dir string, exactBelow int) time.Duration {
	start := time.Now()
	x, err := hnsw.Open(dir, &hnsw.Options{Dims: 100, ExactBelow: exactBelow})
	if err != nil {
		b.Fatalf("Open: %v", err)
	}
	d := time.Since(start)
	if err := x.Close(); err != nil {
		b.Fatalf("Close: %v", err)
	}
	return d
}

// fileSizes returns the sizes in MB of the saved graph and meta files.
func fileSizes(tb testing.TB, dir string) (graphMB, metaMB float64) {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		switch {
		case strings.HasSuffix(e.Name(), ".graph"):
			graphMB = float64(fi.Size()) / 1e6
		case strings.HasSuffix(e.Name(), ".meta"):
			metaMB = float64(fi.Size()) / 1e6
		}
	}
	return graphMB, metaMB
}

func heapInUse() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapInuse) / 1e6
}
