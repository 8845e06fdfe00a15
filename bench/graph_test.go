package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/hnsw"
	"github.com/hmo-dev/hmo/localllm"
	"github.com/hmo-dev/hmo/synth"
	"github.com/hmo-dev/hmo/vecfile"
)

// BenchmarkGraphParams measures coder/hnsw, as hnsw.Index drives it, on
// hmo's own vectors: the first HMO_GRAPH_N (default 20000) vectors of the
// scale store under HMO_BENCH_DIR (run BenchmarkScale first), for each
// M/efConstruction/efSearch in HMO_GRAPH_PARAMS (default
// "24/24/64,16/100/100,32/100/200"). It reports the build rate, the
// recall@10 of the graph against the exact scan over 200 queries (150
// embedded everyday queries, 50 stored vectors) and the search median.
//
//	HMO_BENCH_DIR=... go test -run '^$' -bench GraphParams -benchtime 1x -timeout 2h ./bench/
func BenchmarkGraphParams(b *testing.B) {
	base := os.Getenv(envBenchDir)
	if base == "" {
		b.Skip("SKIPPED LOUDLY: set HMO_BENCH_DIR to the directory of a scale store (BenchmarkScale builds it)")
	}
	matches, _ := filepath.Glob(filepath.Join(base, "scale2-*", engine.VectorDir))
	if len(matches) == 0 {
		b.Skipf("SKIPPED LOUDLY: no scale store under %s", base)
	}
	n := 20000
	if v := os.Getenv("HMO_GRAPH_N"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	params := "24/24/64,16/100/100,32/100/200"
	if v := os.Getenv("HMO_GRAPH_PARAMS"); v != "" {
		params = v
	}
	x, err := vecfile.Open(matches[0], &vecfile.Options{Dims: 100})
	if err != nil {
		b.Fatal(err)
	}
	var docs []engine.VectorDoc
	x.Range(func(id uint64, v []float32) bool {
		docs = append(docs, engine.VectorDoc{ID: id, Vector: slices.Clone(v)})
		return len(docs) < n
	})
	x.Close()
	emb, err := localllm.NewStatic(nil)
	if err != nil {
		b.Fatal(err)
	}
	qs, err := emb.Embed(context.Background(), synth.Queries(17, 150))
	if err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		qs = append(qs, docs[(i*7919)%len(docs)].Vector)
	}
	exact, err := hnsw.Open(b.TempDir(), &hnsw.Options{Dims: 100, ExactBelow: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	defer exact.Close()
	if err := exact.Apply(docs, nil, 1); err != nil {
		b.Fatal(err)
	}
	for _, p := range strings.Split(params, ",") {
		var m, efc, efs int
		if _, err := fmt.Sscanf(p, "%d/%d/%d", &m, &efc, &efs); err != nil {
			b.Fatalf("param %q: %v", p, err)
		}
		b.Run(fmt.Sprintf("M=%d/efC=%d/efS=%d/n=%d", m, efc, efs, len(docs)), func(b *testing.B) {
			g, err := hnsw.Open(b.TempDir(), &hnsw.Options{Dims: 100, ExactBelow: -1, M: m, EfConstruction: efc, EfSearch: efs})
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			start := time.Now()
			for i := 0; i < len(docs); i += 1000 {
				if err := g.Apply(docs[i:min(i+1000, len(docs))], nil, uint64(i)); err != nil {
					b.Fatal(err)
				}
			}
			build := time.Since(start)
			var sum float64
			var lat []time.Duration
			for _, q := range qs {
				want, err := exact.Search(q, 10)
				if err != nil {
					continue
				}
				t0 := time.Now()
				got, err := g.Search(q, 10)
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				sum += overlap(got, want)
			}
			slices.Sort(lat)
			b.ReportMetric(float64(len(docs))/build.Seconds(), "build-vec/s")
			b.ReportMetric(sum/float64(len(lat)), "recall@10")
			b.ReportMetric(ms(lat[len(lat)/2]), "search-median-ms")
		})
	}
}

// BenchmarkInt8 compares the vecfile formats on the scale store's own
// vectors: recall@10 of the int8 rows against the float32 rows over 200
// queries, and the median scan time of each.
//
//	HMO_BENCH_DIR=... go test -run '^$' -bench Int8 -benchtime 1x ./bench/
func BenchmarkInt8(b *testing.B) {
	base := os.Getenv(envBenchDir)
	matches, _ := filepath.Glob(filepath.Join(base, "scale2-*", engine.VectorDir))
	if base == "" || len(matches) == 0 {
		b.Skip("SKIPPED LOUDLY: set HMO_BENCH_DIR to the directory of a scale store (BenchmarkScale builds it)")
	}
	f32, err := vecfile.Open(matches[0], &vecfile.Options{Dims: 100})
	if err != nil {
		b.Fatal(err)
	}
	defer f32.Close()
	i8, err := vecfile.Open(b.TempDir(), &vecfile.Options{Dims: 100, Format: vecfile.Int8})
	if err != nil {
		b.Fatal(err)
	}
	defer i8.Close()
	var docs []engine.VectorDoc
	f32.Range(func(id uint64, v []float32) bool {
		docs = append(docs, engine.VectorDoc{ID: id, Vector: slices.Clone(v)})
		return true
	})
	if err := i8.Apply(docs, nil, 1); err != nil {
		b.Fatal(err)
	}
	emb, err := localllm.NewStatic(nil)
	if err != nil {
		b.Fatal(err)
	}
	qs, err := emb.Embed(context.Background(), synth.Queries(23, 150))
	if err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		qs = append(qs, docs[(i*7919)%len(docs)].Vector)
	}
	var sum float64
	var tf, ti []time.Duration
	for _, q := range qs {
		t0 := time.Now()
		want, err := f32.Search(q, 10)
		tf = append(tf, time.Since(t0))
		if err != nil {
			continue
		}
		t0 = time.Now()
		got, err := i8.Search(q, 10)
		ti = append(ti, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		sum += overlap(got, want)
	}
	slices.Sort(tf)
	slices.Sort(ti)
	b.ReportMetric(float64(len(docs)), "vectors")
	b.ReportMetric(sum/float64(len(ti)), "int8-recall@10")
	b.ReportMetric(ms(tf[len(tf)/2]), "float32-scan-median-ms")
	b.ReportMetric(ms(ti[len(ti)/2]), "int8-scan-median-ms")
}

// overlap is the share of want's ids found in got.
func overlap(got, want []engine.VectorHit) float64 {
	hit := 0
	for _, h := range got {
		if slices.ContainsFunc(want, func(w engine.VectorHit) bool { return w.ID == h.ID }) {
			hit++
		}
	}
	return float64(hit) / float64(max(len(want), 1))
}
