package vecfile

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/vecscan"
	"github.com/hmo-dev/hmo/localllm/static"
	"github.com/hmo-dev/hmo/synth"
)

// TestIVFCurve measures the partition's recall@10 against the exact scan,
// after the engine's float32 rescoring, and its CPU per search, over a
// range of list sizes and probes, on a copy of a peers benchmark's vector
// index: HMO_IVF_VEC the copy of its vectors directory, HMO_IVF_WORK the
// benchmark's work directory (queries.json with their vectors,
// vectors.f32, hmo-ids.json). HMO_IVF_LISTROWS and HMO_IVF_PROBES are
// comma-separated lists. Skipped without them.
func TestIVFCurve(t *testing.T) {
	vdir, work := os.Getenv("HMO_IVF_VEC"), os.Getenv("HMO_IVF_WORK")
	if vdir == "" || work == "" {
		t.Skip("HMO_IVF_VEC and HMO_IVF_WORK not set")
	}
	ints := func(env, def string) []int {
		s := os.Getenv(env)
		if s == "" {
			s = def
		}
		var out []int
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		return out
	}
	qs, vecs, pos := readPeersWork(t, work)
	dims := len(qs[0].Vec)
	for i := range qs {
		unitInPlace(qs[i].Vec)
	}
	truth := exactTops(t, vecs, dims, qs)
	var today [][]int // the full 4-bit pass's top 10s
	run := func(x *Index, label string) {
		var got int
		var cpu time.Duration
		var ru0, ru1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		start := time.Now()
		tops := make([][]int, len(qs))
		for i, q := range qs {
			tops[i] = rescoredTop(t, x, q.Vec, 200, vecs, pos)
		}
		wall := time.Since(start)
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		cpu = time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
		same := 0
		for i := range qs {
			for _, r := range tops[i] {
				if slices.Contains(truth[i], r) {
					got++
				}
				if today != nil && slices.Contains(today[i], r) {
					same++
				}
			}
		}
		if today == nil {
			today = tops
		}
		label += fmt.Sprintf(" top-10 overlap with the full pass %.4f", float64(same)/float64(10*len(qs)))
		fmt.Printf("%s recall@10 %.4f cpu/search %.3f ms wall/search %.3f ms\n", label, float64(got)/float64(10*len(qs)),
			float64(cpu.Microseconds())/1000/float64(len(qs)), float64(wall.Microseconds())/1000/float64(len(qs)))
	}
	// HMO_IVF_ABOVE (default 0: the defaults) is QuickAbove and
	// PartitionAbove, to measure a store smaller than the defaults'
	// thresholds; with it the int8 scan of every row is measured first.
	above := ints("HMO_IVF_ABOVE", "0")[0]
	quick := ints("HMO_IVF_QUICK", "0")[0]
	if above > 0 {
		x, err := Open(vdir, &Options{Dims: dims, Format: Int8Rescore, KeepFormat: true, QuickAbove: -1})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			run(x, "int8 scan")
		}
		x.Close()
	}
	x, err := Open(vdir, &Options{Dims: dims, Format: Int8Rescore, KeepFormat: true, PartitionAbove: -1, QuickAbove: above, Quick: quick})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		run(x, "full q4 scan")
	}
	x.Close()
	for _, lr := range ints("HMO_IVF_LISTROWS", "1000") {
		os.Remove(filepath.Join(vdir, ivfName))
		start := time.Now()
		x, err := Open(vdir, &Options{Dims: dims, Format: Int8Rescore, KeepFormat: true, ListRows: lr,
			QuickAbove: above, PartitionAbove: above, Quick: quick})
		if err != nil {
			t.Fatal(err)
		}
		x.waitBuild()
		if x.part == nil {
			t.Fatal("no partition")
		}
		fmt.Printf("listrows %d lists %d open+build %v out %d\n", lr, x.part.lists, time.Since(start), len(x.part.outRows))
		for _, pr := range ints("HMO_IVF_PROBES", "8,16,32,64") {
			x.opts.Probes = pr
			scanned := 0
			for _, q := range qs {
				sel := vecscan.NewHeap(pr)
				for l := range x.part.lists {
					sel.Push(l, vecscan.Dot(q.Vec, x.part.centroids[l*dims:(l+1)*dims]))
				}
				for _, h := range sel.Sorted() {
					scanned += x.part.starts[h.Row+1] - x.part.starts[h.Row]
				}
			}
			fmt.Printf("probes %d: %.0f rows scanned a search (%.1f%%)\n", pr, float64(scanned)/float64(len(qs)), 100*float64(scanned)/float64(len(qs))/float64(x.part.rows))
			run(x, fmt.Sprintf("listrows %d probes %d", lr, pr))
		}
		x.Close()
	}
}

// TestIVFFilterCurve measures filtered searches through the partition
// against the exact filtered answers and the 4-bit pass over every row:
// an index built from the rows of HMO_IVF_FILTER_SRC (a vectors
// directory of an Int8Rescore index, its int8 rows decoded), every row
// in scope "ten" (10% of them, at random), "one" (1%), "three" (3%),
// "five" (5%) or "rest", and
// timed a minute apart. For each filter (none, each scope, the middle
// 10% and 1% of the times): recall@10 of the engine's answer (the
// candidates rescored from the decoded rows) against the exact filtered
// top 10, and CPU per search, through the partition and through the
// full pass. HMO_IVF_FILTER_QUERIES queries (default 200): stored rows
// plus noise; HMO_IVF_FILTER_ONLY, if set, names the filters to run
// (comma-separated). Skipped without HMO_IVF_FILTER_SRC.
func TestIVFFilterCurve(t *testing.T) {
	src := os.Getenv("HMO_IVF_FILTER_SRC")
	if src == "" {
		t.Skip("HMO_IVF_FILTER_SRC not set")
	}
	nq := 200
	if s := os.Getenv("HMO_IVF_FILTER_QUERIES"); s != "" {
		nq, _ = strconv.Atoi(s)
	}
	const dims = 100
	sx, err := Open(src, &Options{Dims: dims, Format: Int8Rescore, ReadOnly: true, PartitionAbove: -1, QuickAbove: -1})
	if err != nil {
		t.Fatal(err)
	}
	var vecs []float32
	for r := range sx.n {
		if slotFlags(sx.slotAt(r))&flagLive == 0 {
			continue
		}
		row := sx.rowAt(r)
		scale := math.Float32frombits(binary.LittleEndian.Uint32(row[dims:]))
		for i := range dims {
			vecs = append(vecs, float32(int8(row[i]))*scale)
		}
	}
	sx.Close()
	n := len(vecs) / dims
	for r := range n {
		unitInPlace(vecs[r*dims : (r+1)*dims])
	}
	rng := rand.New(rand.NewPCG(5, 6))
	scopes := make([]string, n)
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	x, err := Open(dir, &Options{Dims: dims, Format: Int8Rescore})
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < n; lo += 10000 {
		var docs []engine.VectorDoc
		for r := lo; r < min(n, lo+10000); r++ {
			switch p := rng.IntN(100); {
			case p < 10:
				scopes[r] = "ten"
			case p < 11:
				scopes[r] = "one"
			case p < 14:
				scopes[r] = "three"
			case p < 19:
				scopes[r] = "five"
			default:
				scopes[r] = "rest"
			}
			docs = append(docs, engine.VectorDoc{ID: uint64(r + 1), Vector: vecs[r*dims : (r+1)*dims], Scope: scopes[r], Session: "s",
				Time: t0.Add(time.Duration(r) * time.Minute)})
		}
		if err := x.Apply(docs, nil, uint64(lo+1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if x, err = Open(dir, &Options{Dims: dims, Format: Int8Rescore}); err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	x.waitBuild()
	if x.part == nil {
		t.Fatal("no partition")
	}
	fmt.Printf("%d rows, open+build %v, %d lists\n", n, time.Since(start), x.part.lists)
	at := func(r int) time.Time { return t0.Add(time.Duration(r) * time.Minute) }
	filters := []struct {
		name string
		f    engine.VectorFilter
		keep func(r int) bool
	}{
		{"none", engine.VectorFilter{}, nil},
		{"scope 10%", engine.VectorFilter{Scope: "ten"}, func(r int) bool { return scopes[r] == "ten" }},
		{"scope 1%", engine.VectorFilter{Scope: "one"}, func(r int) bool { return scopes[r] == "one" }},
		{"scope 3%", engine.VectorFilter{Scope: "three"}, func(r int) bool { return scopes[r] == "three" }},
		{"scope 5%", engine.VectorFilter{Scope: "five"}, func(r int) bool { return scopes[r] == "five" }},
		{"time 10%", engine.VectorFilter{From: at(n * 45 / 100), To: at(n * 55 / 100)}, func(r int) bool { return r >= n*45/100 && r < n*55/100 }},
		{"time 1%", engine.VectorFilter{From: at(n * 495 / 1000), To: at(n * 505 / 1000)}, func(r int) bool { return r >= n*495/1000 && r < n*505/1000 }},
	}
	qs := make([][]float32, nq)
	for i := range qs {
		r := rng.IntN(n)
		q := make([]float32, dims)
		for j := range q {
			q[j] = vecs[r*dims+j] + float32(rng.NormFloat64()*0.05)
		}
		unitInPlace(q)
		qs[i] = q
	}
	cands := x.RescoreCandidates(10)
	for _, fl := range filters {
		if only := os.Getenv("HMO_IVF_FILTER_ONLY"); only != "" && !strings.Contains(only, fl.name) {
			continue
		}
		truth := make([][]int, nq)
		for i, q := range qs {
			hits, err := vecscan.Scan(vecs, dims, q, 10, fl.keep)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				truth[i] = append(truth[i], h.Row)
			}
		}
		for _, mode := range []string{"partition", "full pass"} {
			p := x.part
			if mode == "full pass" {
				x.part = nil
			}
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			wall := time.Now()
			got := 0
			for i, q := range qs {
				hits, err := x.SearchFilter(q, cands, fl.f)
				if err != nil {
					t.Fatal(err)
				}
				var rs []vecscan.Hit
				for _, h := range hits {
					r := int(h.ID - 1)
					rs = append(rs, vecscan.Hit{Row: r, Score: vecscan.Dot(q, vecs[r*dims:(r+1)*dims])})
				}
				slices.SortFunc(rs, vecscan.Compare)
				for _, h := range rs[:min(10, len(rs))] {
					if slices.Contains(truth[i], h.Row) {
						got++
					}
				}
			}
			el := time.Since(wall)
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			x.part = p
			cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
			fmt.Printf("%-10s %-9s recall@10 %.4f cpu/search %.3f ms wall/search %.3f ms\n", fl.name, mode,
				float64(got)/float64(10*nq), float64(cpu.Microseconds())/1000/float64(nq), float64(el.Microseconds())/1000/float64(nq))
		}
	}
}

// TestSearchAB compares the CPU of two configurations of one vector
// index in one process: HMO_AB_A and HMO_AB_B are two copies of a
// peers benchmark's vectors directory (HMO_IVF_WORK: queries.json), A
// opened with the defaults, B with QuickAbove and PartitionAbove
// HMO_IVF_ABOVE, Quick HMO_IVF_QUICK, ListRows HMO_IVF_LISTROWS and
// Probes HMO_IVF_PROBES (one value each). The 200 queries' searches
// (Search for 200, the engine's candidates for k 100) alternate between
// A and B in blocks of 10, HMO_AB_ROUNDS times over; it prints the
// process CPU and wall time a search of each, per round, and the
// medians. Skipped without them.
func TestSearchAB(t *testing.T) {
	da, db, work := os.Getenv("HMO_AB_A"), os.Getenv("HMO_AB_B"), os.Getenv("HMO_IVF_WORK")
	if da == "" || db == "" || work == "" {
		t.Skip("HMO_AB_A, HMO_AB_B and HMO_IVF_WORK not set")
	}
	env := func(name string, def int) int {
		if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
			return v
		}
		return def
	}
	var qs []peersQuery
	readPeersJSON(t, work, "queries.json", &qs)
	dims := len(qs[0].Vec)
	xa, err := Open(da, &Options{Dims: dims, Format: Int8Rescore, KeepFormat: true})
	if err != nil {
		t.Fatal(err)
	}
	defer xa.Close()
	above := env("HMO_IVF_ABOVE", 50000)
	xb, err := Open(db, &Options{Dims: dims, Format: Int8Rescore, KeepFormat: true, QuickAbove: above, PartitionAbove: above,
		Quick: env("HMO_IVF_QUICK", 0), ListRows: env("HMO_IVF_LISTROWS", 0), Probes: env("HMO_IVF_PROBES", 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer xb.Close()
	xb.waitBuild()
	fmt.Printf("B partitioned %v\n", xb.Partitioned())
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var ca, cb, wa, wb []float64
	for round := range env("HMO_AB_ROUNDS", 5) {
		var sum [2][2]time.Duration
		for lo := 0; lo < len(qs); lo += 10 {
			for i, x := range []*Index{xa, xb} {
				if round%2 == 1 {
					x = []*Index{xb, xa}[i]
					i = 1 - i
				}
				c0, w0 := cpu(), time.Now()
				for _, q := range qs[lo:min(lo+10, len(qs))] {
					if _, err := x.Search(q.Vec, 200); err != nil {
						t.Fatal(err)
					}
				}
				sum[i][0] += cpu() - c0
				sum[i][1] += time.Since(w0)
			}
		}
		per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(len(qs)) }
		ca, cb = append(ca, per(sum[0][0])), append(cb, per(sum[1][0]))
		wa, wb = append(wa, per(sum[0][1])), append(wb, per(sum[1][1]))
		fmt.Printf("round %d: cpu A %.3f B %.3f (%.3f) wall A %.3f B %.3f ms a search\n", round, ca[round], cb[round], cb[round]/ca[round], wa[round], wb[round])
	}
	med := func(v []float64) float64 { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	ratios := make([]float64, len(ca))
	for i := range ca {
		ratios[i] = cb[i] / ca[i]
	}
	fmt.Printf("medians: cpu A %.3f B %.3f, pair ratio %.3f; wall A %.3f B %.3f\n", med(ca), med(cb), med(ratios), med(wa), med(wb))
}

// TestInt8PartitionCurve measures the partition of the int8 rows (the
// ivf8 file, Options.Int8PartitionAbove) on a peers benchmark's vectors
// (HMO_IVF_WORK: queries.json, vectors.f32, hmo-ids.json): an
// Int8Rescore index of them is written to a temporary directory (or
// HMO_IVF8_DIR, kept between runs; of the first HMO_IVF8_ROWS vectors
// only, if set), then for each HMO_IVF_LISTROWS
// (comma-separated) its partition is built and, for each HMO_IVF_PROBES,
// it prints the recall@10 against the exact float32 scan of the engine's
// answer (Search for 200, the engine's candidates for k 100, or
// HMO_IVF8_CANDS; rescored
// from the float32 vectors) and the share of the rows scanned; then the
// CPU a search of the product's path at the last probes against the
// int8 scan of every row (the same index with its partition set aside),
// in blocks of 10 queries alternating, HMO_AB_ROUNDS rounds (default 8),
// by getrusage. HMO_IVF8_SYNTHQ=N asks, instead of the peers queries, N
// of the scale benchmark's vector-recall queries (synth.Queries(3, N),
// static embedder). HMO_IVF8_SYNTH=N takes, instead of the peers
// vectors, N records of the synthetic stream embedded by the static
// embedder, with those queries. Skipped without either.
func TestInt8PartitionCurve(t *testing.T) {
	work := os.Getenv("HMO_IVF_WORK")
	nsynth, _ := strconv.Atoi(os.Getenv("HMO_IVF8_SYNTH"))
	if work == "" && nsynth <= 0 {
		t.Skip("HMO_IVF_WORK or HMO_IVF8_SYNTH not set")
	}
	var qs []peersQuery
	var vecs []float32
	var pos map[uint64]int
	if nsynth > 0 {
		// HMO_IVF8_SYNTH records of the synthetic stream (seed 42) embedded
		// by the static embedder, as the scale benchmark stores them (with
		// its duplicates), and its recall queries.
		emb, err := static.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, in := range synth.New(synth.Options{Seed: 42, Records: nsynth}).Next(nsynth) {
			texts = append(texts, in.Text)
		}
		vs, err := emb.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		pos = map[uint64]int{}
		for i, v := range vs {
			if v != nil {
				pos[uint64(i+1)] = len(vecs) / len(v)
				vecs = append(vecs, v...)
			}
		}
		for r := 0; r < len(pos); r++ {
			unitInPlace(vecs[r*emb.Dims() : (r+1)*emb.Dims()])
		}
		qs = []peersQuery{{Vec: make([]float32, emb.Dims())}}
		if os.Getenv("HMO_IVF8_SYNTHQ") == "" {
			os.Setenv("HMO_IVF8_SYNTHQ", "1000")
		}
	} else {
		qs, vecs, pos = readPeersWork(t, work)
	}
	dims := len(qs[0].Vec)
	if n, err := strconv.Atoi(os.Getenv("HMO_IVF8_SYNTHQ")); err == nil && n > 0 {
		// The scale benchmark's recall queries instead (its
		// vector-recall@10): short synthetic queries, static embedder.
		emb, err := static.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := emb.Embed(context.Background(), synth.Queries(3, n))
		if err != nil {
			t.Fatal(err)
		}
		qs = qs[:0]
		for _, v := range vs {
			if v != nil {
				qs = append(qs, peersQuery{Vec: v})
			}
		}
	}
	for i := range qs {
		unitInPlace(qs[i].Vec)
	}
	cands := 200
	if v, err := strconv.Atoi(os.Getenv("HMO_IVF8_CANDS")); err == nil && v > 0 {
		cands = v
	}
	if n, err := strconv.Atoi(os.Getenv("HMO_IVF8_ROWS")); err == nil && n > 0 && n*dims < len(vecs) {
		vecs = vecs[:n*dims] // the first n vectors: the truth is theirs too
	}
	dir := os.Getenv("HMO_IVF8_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	base := Options{Dims: dims, Format: Int8Rescore, QuickAbove: -1, Int8PartitionAbove: -1}
	if _, err := os.Stat(filepath.Join(dir, slotsName)); err != nil {
		x, err := Open(dir, &base)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]uint64, len(vecs)/dims)
		for id, p := range pos {
			if p < len(ids) {
				ids[p] = id
			}
		}
		var batch []engine.VectorDoc
		for p, id := range ids {
			batch = append(batch, engine.VectorDoc{ID: id, Vector: vecs[p*dims : (p+1)*dims]})
			if len(batch) == 5000 || p == len(ids)-1 {
				if err := x.Apply(batch, nil, uint64(p+1)); err != nil {
					t.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
	}
	list := func(env string, def []int) []int {
		var out []int
		for _, f := range strings.Split(os.Getenv(env), ",") {
			if v, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
				out = append(out, v)
			}
		}
		if len(out) == 0 {
			return def
		}
		return out
	}
	rounds := 8
	if v, err := strconv.Atoi(os.Getenv("HMO_AB_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	truth := exactTops(t, vecs, dims, qs)
	recall := func(x *Index) float64 {
		got := 0
		for i, q := range qs {
			for _, r := range rescoredTop(t, x, q.Vec, cands, vecs, pos) {
				if slices.Contains(truth[i], r) {
					got++
				}
			}
		}
		return float64(got) / float64(10*len(qs))
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for _, lr := range list("HMO_IVF_LISTROWS", []int{DefaultInt8ListRows}) {
		os.Remove(filepath.Join(dir, ivf8Name))
		o := base
		o.Int8PartitionAbove, o.Int8ListRows = 1, lr
		start := time.Now()
		x, err := Open(dir, &o)
		if err != nil {
			t.Fatal(err)
		}
		x.waitBuild()
		p := x.part
		if p == nil || !p.int8 {
			t.Fatal("no partition of the int8 rows")
		}
		fmt.Printf("listrows %d: %d lists, %d rows, open+build %v\n", lr, p.lists, p.rows, time.Since(start))
		x.part = nil
		fmt.Printf("int8 scan of every row: recall@10 %.4f\n", recall(x))
		x.part = p
		probes := list("HMO_IVF_PROBES", []int{DefaultInt8Probes})
		for _, pr := range probes {
			x.opts.Int8Probes = pr
			scanned := 0
			for _, q := range qs {
				sel := vecscan.NewHeap(pr)
				for l := range p.lists {
					sel.Push(l, vecscan.Dot(q.Vec, p.centroids[l*dims:(l+1)*dims]))
				}
				for _, h := range sel.Sorted() {
					scanned += p.starts[h.Row+1] - p.starts[h.Row]
				}
			}
			share := float64(scanned) / float64(len(qs)) / float64(p.rows)
			fmt.Printf("probes %d: %.1f%% of the rows, recall@10 %.4f\n", pr, 100*share, recall(x))
		}
		var ra, ca, cb []float64
		for round := range rounds {
			var sa, sb time.Duration
			for lo := 0; lo < len(qs); lo += 10 {
				for w := range 2 {
					if (w+round)%2 == 0 {
						x.part = nil
					}
					c0 := cpu()
					for _, q := range qs[lo:min(len(qs), lo+10)] {
						if _, err := x.Search(q.Vec, cands); err != nil {
							t.Fatal(err)
						}
					}
					if (w+round)%2 == 0 {
						sa += cpu() - c0
					} else {
						sb += cpu() - c0
					}
					x.part = p
				}
			}
			a, b := float64(sa.Microseconds())/1000/float64(len(qs)), float64(sb.Microseconds())/1000/float64(len(qs))
			ra, ca, cb = append(ra, b/a), append(ca, a), append(cb, b)
			fmt.Printf("round %d: int8 scan %.3f ms, partition (%d probes) %.3f ms (%.3f)\n", round, a, x.opts.Int8Probes, b, b/a)
		}
		med := func(v []float64) float64 { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
		fmt.Printf("medians: int8 scan %.3f ms, partition %.3f ms, pair ratio %.3f\n", med(ca), med(cb), med(ra))
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// peersQuery is a query of a peers benchmark's work directory
// (queries.json).
type peersQuery struct {
	Vec []float32 `json:"vec"`
}

// readPeersJSON decodes the JSON file name of a peers benchmark's work
// directory into v.
func readPeersJSON(t *testing.T, work, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(work, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// readPeersWork reads a peers benchmark's work directory: its queries,
// the vectors every engine indexed (vectors.f32, made unit), and the row
// of each hmo id among them (hmo-ids.json).
func readPeersWork(t *testing.T, work string) (qs []peersQuery, vecs []float32, pos map[uint64]int) {
	t.Helper()
	readPeersJSON(t, work, "queries.json", &qs)
	var ids []uint64
	readPeersJSON(t, work, "hmo-ids.json", &ids)
	b, err := os.ReadFile(filepath.Join(work, "vectors.f32"))
	if err != nil {
		t.Fatal(err)
	}
	dims := len(qs[0].Vec)
	vecs = make([]float32, len(b)/4)
	for i := range vecs {
		vecs[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	for r := 0; r < len(vecs)/dims; r++ {
		unitInPlace(vecs[r*dims : (r+1)*dims])
	}
	pos = make(map[uint64]int, len(ids))
	for p, id := range ids {
		pos[id] = p
	}
	return qs, vecs, pos
}

// exactTops returns the rows of each query's exact top 10 over vecs.
func exactTops(t *testing.T, vecs []float32, dims int, qs []peersQuery) [][]int {
	t.Helper()
	tops := make([][]int, len(qs))
	for i, q := range qs {
		hits, err := vecscan.Scan(vecs, dims, q.Vec, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			tops[i] = append(tops[i], h.Row)
		}
	}
	return tops
}

// rescoredTop returns the rows of the top 10 of x's cands candidates
// for q, rescored by their exact dot products over vecs (pos: the row of
// each id), as the engine rescores them.
func rescoredTop(t *testing.T, x *Index, q []float32, cands int, vecs []float32, pos map[uint64]int) []int {
	t.Helper()
	dims := len(q)
	hits, err := x.Search(q, cands)
	if err != nil {
		t.Fatal(err)
	}
	var rs []vecscan.Hit
	for _, h := range hits {
		p := pos[h.ID]
		rs = append(rs, vecscan.Hit{Row: p, Score: vecscan.Dot(q, vecs[p*dims:(p+1)*dims])})
	}
	slices.SortFunc(rs, vecscan.Compare)
	var top []int
	for _, h := range rs[:min(10, len(rs))] {
		top = append(top, h.Row)
	}
	return top
}
