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
	"github.com/hmo-dev/hmo/localllm/static"
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
	emb, err := static.New(nil)
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

// BenchmarkInt8 compares vecfile's scans on the scale store's own
// vectors: the float32 scan (the reference), the int8 first pass with
// float32 rescoring (ScanInt8) at Rescore 2 and 4, and the Int8 row
// format alone. Each side answers the same 200 queries (150 embedded
// everyday queries, 50 stored vectors) for k 10 and for k 100 (the
// engine's candidates per index), in alternating blocks of 25 queries,
// for HMO_INT8_ROUNDS rounds (default 3). It reports per side and k the
// recall against the float32 scan, the median wall time and the CPU time
// per query (all threads, getrusage), and per side the resident pages of
// its matrix and companion mappings after all the queries (smaps).
//
//	HMO_BENCH_DIR=... go test -run '^$' -bench 'Int8$' -benchtime 1x ./bench/
func BenchmarkInt8(b *testing.B) {
	base := os.Getenv(envBenchDir)
	matches, _ := filepath.Glob(filepath.Join(base, "scale2-*", engine.VectorDir))
	if base == "" || len(matches) == 0 {
		b.Skip("SKIPPED LOUDLY: set HMO_BENCH_DIR to the directory of a scale store (BenchmarkScale builds it)")
	}
	rounds := 3
	if v, err := strconv.Atoi(os.Getenv("HMO_INT8_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	store, err := vecfile.Open(matches[0], &vecfile.Options{Dims: 100, ReadOnly: true, Scan: vecfile.ScanFloat32})
	if err != nil {
		b.Fatal(err)
	}
	var docs []engine.VectorDoc
	store.Range(func(id uint64, v []float32) bool {
		docs = append(docs, engine.VectorDoc{ID: id, Vector: slices.Clone(v)})
		return true
	})
	store.Close()
	type result struct {
		lat []time.Duration
		cpu time.Duration
		rec float64
	}
	sides := []struct {
		name string
		opts vecfile.Options
		dir  string
		x    *vecfile.Index
		res  map[int]*result
	}{
		{name: "float32", opts: vecfile.Options{Scan: vecfile.ScanFloat32}},
		{name: "scanint8-r2", opts: vecfile.Options{Scan: vecfile.ScanInt8, Rescore: 2}},
		{name: "scanint8-r4", opts: vecfile.Options{Scan: vecfile.ScanInt8, Rescore: 4}},
		{name: "int8rows", opts: vecfile.Options{Format: vecfile.Int8}},
	}
	ks := []int{10, 100}
	for i := range sides {
		sd := &sides[i]
		sd.opts.Dims, sd.dir, sd.res = 100, b.TempDir(), map[int]*result{}
		for _, k := range ks {
			sd.res[k] = &result{}
		}
		x, err := vecfile.Open(sd.dir, &sd.opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := x.Apply(docs, nil, 1); err != nil {
			b.Fatal(err)
		}
		if err := x.Close(); err != nil {
			b.Fatal(err)
		}
		// Reopened: its mappings hold only what the searches touch.
		if sd.x, err = vecfile.Open(sd.dir, &sd.opts); err != nil {
			b.Fatal(err)
		}
		defer sd.x.Close()
	}
	emb, err := static.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	qs, err := emb.Embed(context.Background(), synth.Queries(23, 150))
	if err != nil {
		b.Fatal(err)
	}
	qs = slices.DeleteFunc(qs, func(q []float32) bool { return q == nil })
	for i := range 50 {
		qs = append(qs, docs[(i*7919)%len(docs)].Vector)
	}
	want := map[int][][]engine.VectorHit{}
	for _, k := range ks {
		for _, q := range qs {
			w, err := sides[0].x.Search(q, k)
			if err != nil {
				b.Fatal(err)
			}
			want[k] = append(want[k], w)
		}
	}
	const block = 25
	for range rounds {
		for _, k := range ks {
			for lo := 0; lo < len(qs); lo += block {
				for s := range sides {
					r := sides[s].res[k]
					c0 := cpuTime()
					for i := lo; i < min(lo+block, len(qs)); i++ {
						t0 := time.Now()
						got, err := sides[s].x.Search(qs[i], k)
						r.lat = append(r.lat, time.Since(t0))
						if err != nil {
							b.Fatal(err)
						}
						r.rec += overlap(got, want[k][i])
					}
					r.cpu += cpuTime() - c0
				}
			}
		}
	}
	rss := smapsRSS()
	b.ReportMetric(float64(len(docs)), "vectors")
	for _, sd := range sides {
		for _, k := range ks {
			r := sd.res[k]
			slices.Sort(r.lat)
			n := float64(len(r.lat))
			name := fmt.Sprintf("%s-k%d", sd.name, k)
			b.ReportMetric(r.rec/n, name+"-recall")
			b.ReportMetric(ms(r.lat[len(r.lat)/2]), name+"-median-ms")
			b.ReportMetric(r.cpu.Seconds()*1000/n, name+"-cpu-ms/query")
		}
		b.ReportMetric(rss[filepath.Join(sd.dir, "matrix")]/(1<<20), sd.name+"-matrix-rss-MB")
		b.ReportMetric(rss[filepath.Join(sd.dir, "int8")]/(1<<20), sd.name+"-int8-rss-MB")
	}
}

// smapsRSS is the resident bytes of each file mapped by this process, by
// path (empty where there is no /proc).
func smapsRSS() map[string]float64 {
	out := map[string]float64{}
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return out
	}
	path := ""
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 6 && strings.Contains(f[0], "-") && strings.HasPrefix(f[5], "/"):
			path = f[5]
		case len(f) >= 5 && strings.Contains(f[0], "-"):
			path = ""
		case len(f) == 3 && f[0] == "Rss:" && path != "":
			kb, _ := strconv.ParseFloat(f[1], 64)
			out[path] += kb * 1024
		}
	}
	return out
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
