package bench_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/synth"
)

// The scale benchmark compares, on one store, a query answered from the
// active tiers with the exhaustive search of the archive (BM25 over every
// record and the cosine of every vector, no graph), and the resident
// memory of a process doing each. Each side runs in its own child process
// so that neither inherits the other's (or the build's) memory.

const (
	envScaleSizes    = "HMO_SCALE_SIZES"      // record counts, comma-separated; default 100000
	envBenchDir      = "HMO_BENCH_DIR"        // where built stores are kept and reused; default a temp dir
	envScaleChild    = "HMO_SCALE_CHILD"      // set in the child processes: the JSON of a scaleJob
	envScaleProf     = "HMO_SCALE_CPUPROFILE" // a directory: each child writes the CPU profile of its timed queries there
	envScaleNoIngest = "HMO_SCALE_NO_INGEST"  // non-empty: skip the two flat-store ingests (at 1M they take most of the run)
	envScaleTrace    = "HMO_SCALE_TRACE"      // a directory: each child writes an execution trace of its timed queries there, one task "question" each
	envScaleResults  = "HMO_SCALE_RESULTS"    // a directory: each child's result (per-question latency, CPU and tier) is kept there as JSON
	envScaleControl  = "HMO_SCALE_CONTROL"    // non-empty: also run two flat children in lockstep, in the flat and tiered children's places (lockstep-control-*)
	scaleQueries     = 200                    // timed queries per side
	scaleRecent      = 40                     // queries are drawn from this many most recent records
)

// scaleServedPasses is how many times the tier-served child asks each of
// its questions (~35): its median is over ~700 timed queries, each
// question weighing the same, rather than over 200 (BENCHMARKS.md, branch
// served12).
const scaleServedPasses = 20

// scaleJob is what a child process runs.
type scaleJob struct {
	Dir  string `json:"dir"`
	Mode string `json:"mode"` // tiered or flat (exhaustive)
	// NoText and NoVector restrict flat mode to one side (engine.Options).
	NoText   bool     `json:"no_text,omitempty"`
	NoVector bool     `json:"no_vector,omitempty"`
	Queries  []string `json:"queries"`
	Sources  []uint64 `json:"sources"` // the record each query was made from
	Out      string   `json:"out"`     // where the child writes its scaleResult
	// Passes > 0 times that many passes over Queries instead of
	// scaleQueries queries.
	Passes int `json:"passes,omitempty"`
	// Lockstep makes the child ask each timed query only when the parent
	// says so (lockstep.go): two children, one per mode, take turns
	// question by question.
	Lockstep bool `json:"lockstep,omitempty"`
}

// scaleResult is what a child process measured.
type scaleResult struct {
	MedianMs  float64 `json:"median_ms"`
	P99Ms     float64 `json:"p99_ms"`
	TierShare float64 `json:"tier_share"` // queries served by tiers 1-2
	Scored    float64 `json:"scored"`     // candidates scored per query (tiered)
	RSSMB     float64 `json:"rss_mb"`     // VmRSS after the queries
	HWMMB     float64 `json:"hwm_mb"`     // VmHWM: peak resident memory
	AnonMB    float64 `json:"anon_mb"`    // RssAnon: heap and stacks
	FileMB    float64 `json:"file_mb"`    // RssFile: pages of mapped files (bbolt, Bleve segments)
	// StoreMB splits the resident pages of mapped files by file: "hmo.db",
	// "vectors" (the vector file), "text" (Bleve's segments), "binary"
	// (the test binary) and "other" (shared libraries).
	StoreMB   map[string]float64 `json:"store_mb"`
	SourceHit float64            `json:"source_hit"` // share of queries whose source record is in the top 10
	Served    []bool             `json:"served"`     // per query (first pass): answered without the archive
	// CPUMedianMs is the median of the process CPU time (user and
	// system, every thread) each query took: on a shared machine it
	// moves less with the load than MedianMs does.
	CPUMedianMs float64 `json:"cpu_median_ms"`
	// Per timed query, in order: wall and CPU time (ms) and the tier
	// that answered it (1, 2, or 3 for the archive; 0 in flat mode).
	// CPUPerQueryMs is the process CPU time over all the timed queries,
	// between them included, over their count: it counts what a mode
	// does after a reply (the tiers' access, the flusher, the
	// collector), which the per-query CPU misses.
	CPUPerQueryMs float64   `json:"cpu_per_query_ms"`
	QueryMs       []float64 `json:"query_ms,omitempty"`
	QueryCPUMs    []float64 `json:"query_cpu_ms,omitempty"`
	QueryTier     []uint8   `json:"query_tier,omitempty"`
}

// BenchmarkScale builds (or reuses) stores of HMO_SCALE_SIZES synthetic
// records and reports, per size, the median and p99 latency of queries
// served by the tiers and of the exhaustive search, their ratio, and the
// resident memory of each serving process. Run it with -benchtime 1x.
func BenchmarkScale(b *testing.B) {
	for _, n := range scaleSizes() {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			dir, err := scaleStore(b, n)
			if err != nil {
				b.Fatal(err)
			}
			queries, sources, err := recentQueries(dir, n)
			if err != nil {
				b.Fatal(err)
			}
			tier := runChild(b, scaleJob{Dir: dir, Mode: string(engine.ModeTiered), Queries: queries, Sources: sources})
			exh := runChild(b, scaleJob{Dir: dir, Mode: string(engine.ModeFlat), Queries: queries, Sources: sources})
			// A query that reaches the archive loads its vector index: the
			// memory of serving from the tiers is measured in a process
			// that asks only the queries the tiers answered.
			var sq []string
			var ss []uint64
			for i, ok := range tier.Served {
				if ok {
					sq, ss = append(sq, queries[i]), append(ss, sources[i])
				}
			}
			if len(sq) == 0 {
				b.Fatal("the tiers answered none of the queries")
			}
			only := runChild(b, scaleJob{Dir: dir, Mode: string(engine.ModeTiered), Queries: sq, Sources: ss, Passes: scaleServedPasses})
			b.ReportMetric(tier.MedianMs, "tiered-median-ms")
			b.ReportMetric(tier.P99Ms, "tiered-p99-ms")
			b.ReportMetric(only.MedianMs, "tier-served-median-ms")
			b.ReportMetric(only.CPUMedianMs, "tier-served-cpu-median-ms")
			b.ReportMetric(tier.CPUMedianMs, "tiered-cpu-median-ms")
			b.ReportMetric(exh.CPUMedianMs, "exhaustive-cpu-median-ms")
			b.ReportMetric(only.P99Ms, "tier-served-p99-ms")
			b.ReportMetric(float64(len(sq)), "tier-served-questions")
			// The first pass asks each question for the first time in
			// the process (cold caches; Tier 2's index filled at its
			// first question): 1 sample in scaleServedPasses, where the
			// 200-query median had about 1 in 6.
			b.ReportMetric(medianOf(only.QueryMs[:min(len(sq), len(only.QueryMs))]), "tier-served-first-pass-median-ms")
			b.ReportMetric(tierShare(only.QueryTier, 2), "tier-served-tier2-share")
			// Questions the first child's tiers answered that this
			// child's sent on to the archive: still timed, named here.
			b.ReportMetric(tierShare(only.QueryTier, engine.TierArchive), "tier-served-archive-share")
			b.ReportMetric(exh.MedianMs, "exhaustive-median-ms")
			b.ReportMetric(exh.P99Ms, "exhaustive-p99-ms")
			b.ReportMetric(exh.MedianMs/only.MedianMs, "speedup-tier-served")
			b.ReportMetric(tier.TierShare, "tier12-share")
			b.ReportMetric(tier.Scored, "tier-scored/query")
			b.ReportMetric(only.RSSMB, "tier-served-rss-MB")
			b.ReportMetric(only.HWMMB, "tier-served-hwm-MB")
			b.ReportMetric(tier.RSSMB, "tiered-rss-MB")
			b.ReportMetric(only.AnonMB, "tier-served-anon-MB")
			b.ReportMetric(only.FileMB, "tier-served-file-MB")
			b.ReportMetric(only.StoreMB["hmo.db"], "tier-served-hmo.db-MB")
			b.ReportMetric(exh.RSSMB, "exhaustive-rss-MB")
			b.ReportMetric(tier.SourceHit, "tier-source-hit@10")
			b.ReportMetric(exh.SourceHit, "exhaustive-source-hit@10")
			b.ReportMetric(float64(engine.DiskBytes(dir))/(1<<20), "disk-MB")
			b.ReportMetric(exh.AnonMB, "exhaustive-anon-MB")
			vec := runChild(b, scaleJob{Dir: dir, Mode: string(engine.ModeFlat), NoText: true, Queries: queries, Sources: sources})
			txt := runChild(b, scaleJob{Dir: dir, Mode: string(engine.ModeFlat), NoVector: true, Queries: queries, Sources: sources})
			b.ReportMetric(vec.MedianMs, "vector-median-ms")
			b.ReportMetric(txt.MedianMs, "text-median-ms")
			// The peers benchmark's workload (issue 11): everyday queries
			// and the planted needles' queries, shorter than whole records.
			wq, ws, err := workload(dir, n)
			if err != nil {
				b.Fatal(err)
			}
			lockstepModes(b, dir, wq, ws)
			for _, side := range []struct {
				name string
				job  scaleJob
			}{
				{"hybrid", scaleJob{Mode: string(engine.ModeFlat)}},
				{"vector", scaleJob{Mode: string(engine.ModeFlat), NoText: true}},
				{"text", scaleJob{Mode: string(engine.ModeFlat), NoVector: true}},
				{"tiered", scaleJob{Mode: string(engine.ModeTiered)}},
			} {
				j := side.job
				j.Dir, j.Queries, j.Sources = dir, wq, ws
				r := runChild(b, j)
				b.ReportMetric(r.MedianMs, "wl-"+side.name+"-median-ms")
				b.ReportMetric(r.P99Ms, "wl-"+side.name+"-p99-ms")
				b.ReportMetric(r.CPUMedianMs, "wl-"+side.name+"-cpu-median-ms")
				if side.name == "hybrid" {
					b.ReportMetric(r.RSSMB, "wl-hybrid-rss-MB")
					b.ReportMetric(r.AnonMB, "wl-hybrid-anon-MB")
					for _, k := range []string{"hmo.db", "vectors", "text", "binary"} {
						b.ReportMetric(r.StoreMB[k], "wl-hybrid-"+k+"-MB")
					}
					b.ReportMetric(r.SourceHit, "wl-needle-hit@10")
				}
				if side.name == "tiered" {
					b.ReportMetric(r.TierShare, "wl-tier12-share")
				}
			}
			if os.Getenv(envScaleNoIngest) == "" {
				flatIngest(b, n)
			}
			archiveMetrics(b, dir, n)
		})
	}
}

func scaleSizes() []int {
	v := os.Getenv(envScaleSizes)
	if v == "" {
		return []int{100_000}
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// scaleStore returns the directory of a tiered store of n synthetic
// records, building it unless a complete one is kept under HMO_BENCH_DIR.
func scaleStore(b *testing.B, n int) (string, error) {
	base := os.Getenv(envBenchDir)
	if base == "" {
		base = workDir
	}
	dir := filepath.Join(base, fmt.Sprintf("scale2-%d", n))
	done := filepath.Join(dir, "complete")
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	e, err := hmo.Open(dir, &engine.Options{Mode: engine.ModeTiered})
	if err != nil {
		return "", err
	}
	start, cpu0 := time.Now(), cpuTime()
	stream := synth.New(synth.Options{Seed: 42, Records: n})
	ingested := 0
	positions := make([]uint64, 0, n) // stream position -> record id (duplicates share one)
	for batch := stream.Next(ingestBatch); batch != nil; batch = stream.Next(ingestBatch) {
		ids, err := e.Remember(context.Background(), batch...)
		if err != nil {
			e.Close()
			return "", err
		}
		positions = append(positions, ids...)
		ingested += len(batch)
		if ingested%100_000 == 0 {
			fmt.Fprintf(os.Stderr, "scale: %d/%d records, %.0f rec/s\n", ingested, n, float64(ingested)/time.Since(start).Seconds())
		}
	}
	took := time.Since(start)
	// The vector index's builds are finished, untimed (the ingest figure
	// stays comparable with earlier runs), as hmo import finishes them: a
	// build left to the background stops at Close and starts again at
	// the next Open, and each child holds the store a few seconds, so
	// every child answered beside a build of the partition (at 1M, 17 ms
	// of CPU a question against 6 without it; BENCHMARKS.md, session 21).
	err = e.FinishBuilds(context.Background(), nil)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	b.ReportMetric(float64(n)/took.Seconds(), "ingest-rec/s")
	// The machine is shared: CPU time per record is the steadier figure.
	b.ReportMetric(1e6*(cpuTime()-cpu0).Seconds()/float64(n), "ingest-cpu-us/rec")
	// Identical texts of one scope are stored once (engine dedup).
	b.ReportMetric(float64(len(distinct(positions))), "stored-records")
	if err := writePositions(dir, positions); err != nil {
		return "", err
	}
	return dir, os.WriteFile(done, []byte(took.String()+"\n"), 0o600)
}

// recentQueries takes the text of each of the most recent records (their
// answers sit in Tier 1), and returns them with the ids of those records.
// Whole records are specific queries: the synthetic vocabulary is small,
// so a few of their words match many records equally well, and the
// sufficiency test sends such ambiguous queries on to the archive.
func recentQueries(dir string, n int) ([]string, []uint64, error) {
	e, err := hmo.Open(dir, &engine.Options{Mode: engine.ModeFlat})
	if err != nil {
		return nil, nil, err
	}
	defer e.Close()
	positions, err := readPositions(dir)
	if err != nil {
		return nil, nil, err
	}
	var out []string
	var ids []uint64
	for p := len(positions) - 1; p >= 0 && len(ids) < scaleRecent; p-- {
		id := positions[p]
		if slices.Contains(ids, id) {
			continue
		}
		r, err := e.Get(id)
		if err != nil {
			return nil, nil, err
		}
		out, ids = append(out, r.Text), append(ids, id)
	}
	return out, ids, nil
}

func runChild(b *testing.B, job scaleJob) scaleResult {
	job.Out = filepath.Join(b.TempDir(), "result.json")
	spec, err := json.Marshal(job)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestScaleChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envScaleChild+"="+string(spec))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s child: %v\n%s", job.Mode, err, out)
	}
	var res scaleResult
	raw, err := os.ReadFile(job.Out)
	if err == nil {
		if kerr := keepResult(raw, job); kerr != nil {
			b.Fatal(kerr)
		}
	}
	if err == nil {
		err = json.Unmarshal(raw, &res)
	}
	if err != nil {
		b.Fatalf("%s child result: %v", job.Mode, err)
	}
	return res
}

// keepResult keeps a child's result under HMO_SCALE_RESULTS, when set,
// in a new file named for the child.
func keepResult(raw []byte, job scaleJob) error {
	d := os.Getenv(envScaleResults)
	if d == "" {
		return nil
	}
	f, err := os.CreateTemp(d, childName(job)+"-*.json")
	if err == nil {
		_, err = f.Write(raw)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		return fmt.Errorf("keeping the %s child's result: %w", job.Mode, err)
	}
	return nil
}

// TestScaleChild is the child side of BenchmarkScale; it does nothing in
// a normal test run.
func TestScaleChild(t *testing.T) {
	spec := os.Getenv(envScaleChild)
	if spec == "" {
		t.Skip("runs only as a BenchmarkScale child")
	}
	var job scaleJob
	if err := json.Unmarshal([]byte(spec), &job); err != nil {
		t.Fatal(err)
	}
	res, err := serveQueries(job)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(job.Out, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

func serveQueries(job scaleJob) (scaleResult, error) {
	var res scaleResult
	ctx := context.Background()
	e, err := hmo.Open(job.Dir, &engine.Options{Mode: engine.Mode(job.Mode), NoText: job.NoText, NoVector: job.NoVector})
	if err != nil {
		return res, err
	}
	defer e.Close()
	// The first query opens what the mode needs (the exhaustive side
	// loads every vector): not timed.
	if _, err := e.Recall(ctx, engine.Query{Text: job.Queries[0], K: 10}); err != nil {
		return res, err
	}
	var turns *turnTaker
	if job.Lockstep {
		if turns, err = takeTurns(); err != nil {
			return res, err
		}
		defer turns.close()
	}
	before := e.TierStats()
	if d := os.Getenv(envScaleProf); d != "" {
		stop, err := startProfile(d, job)
		if err != nil {
			return res, err
		}
		defer stop()
	}
	traced := os.Getenv(envScaleTrace) != ""
	if traced {
		stop, err := startTrace(os.Getenv(envScaleTrace), job)
		if err != nil {
			return res, err
		}
		defer stop()
	}
	timed := scaleQueries
	if job.Passes > 0 {
		timed = job.Passes * len(job.Queries)
	}
	cpuStart := cpuTime()
	lat := make([]time.Duration, 0, timed)
	cpu := make([]time.Duration, 0, timed)
	for i := range timed {
		q := job.Queries[i%len(job.Queries)]
		if err := turns.wait(); err != nil {
			return res, err
		}
		s0 := e.TierStats().Served
		qctx, task := ctx, (*trace.Task)(nil)
		if traced {
			qctx, task = trace.NewTask(ctx, "question")
		}
		c0, t0 := cpuTime(), time.Now()
		hits, err := e.Recall(qctx, engine.Query{Text: q, K: 10})
		lat = append(lat, time.Since(t0))
		cpu = append(cpu, cpuTime()-c0)
		if traced {
			task.End()
		}
		if err != nil {
			return res, err
		}
		res.QueryMs, res.QueryCPUMs = append(res.QueryMs, ms(lat[i])), append(res.QueryCPUMs, ms(cpu[i]))
		res.QueryTier = append(res.QueryTier, servedBy(s0, e.TierStats().Served))
		if i < len(job.Queries) {
			res.Served = append(res.Served, len(hits) > 0 && hits[0].Tier != engine.TierArchive)
		}
		if i < len(job.Queries) && slices.ContainsFunc(hits, func(h engine.Result) bool { return h.Record.ID == job.Sources[i] }) {
			res.SourceHit++
		}
		if err := turns.done(); err != nil {
			return res, err
		}
	}
	res.CPUPerQueryMs = ms(cpuTime()-cpuStart) / float64(timed)
	res.SourceHit /= float64(min(len(job.Queries), timed))
	slices.Sort(lat)
	res.MedianMs, res.P99Ms = ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100])
	slices.Sort(cpu)
	res.CPUMedianMs = ms(cpu[len(cpu)/2])
	after := e.TierStats()
	if q := float64(after.Queries - before.Queries); q > 0 {
		res.TierShare = float64(after.Served[1]+after.Served[2]-before.Served[1]-before.Served[2]) / q
		res.Scored = float64(after.Scored-before.Scored) / q
	}
	res.RSSMB, res.HWMMB = procStatusMB("VmRSS:"), procStatusMB("VmHWM:")
	res.AnonMB, res.FileMB = procStatusMB("RssAnon:"), procStatusMB("RssFile:")
	res.StoreMB = residentByFile(job.Dir)
	return res, nil
}

// medianOf is the median of v (0 for none), v left as it was.
func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// tierShare is the share of the queries that tier answered.
func tierShare(served []uint8, tier uint8) float64 {
	if len(served) == 0 {
		return 0
	}
	n := 0
	for _, t := range served {
		if t == tier {
			n++
		}
	}
	return float64(n) / float64(len(served))
}

// servedBy names the tier whose count of served queries grew from
// before to after (0 when none did: flat mode).
func servedBy(before, after [4]uint64) uint8 {
	for t := range after {
		if after[t] > before[t] {
			return uint8(t)
		}
	}
	return 0
}

// residentByFile sums the resident pages of this process's file mappings
// (/proc/self/smaps), in MiB, by the kinds StoreMB names; nil where there
// is no /proc.
func residentByFile(dir string) map[string]float64 {
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return nil
	}
	exe, _ := os.Executable()
	dir, _ = filepath.Abs(dir)
	out := map[string]float64{}
	kind := ""
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") { // a mapping's header: range perms offset dev inode [path]
			kind = ""
			if len(f) >= 6 && strings.HasPrefix(f[5], "/") {
				kind = fileKind(f[5], dir, exe)
			}
			continue
		}
		if f[0] == "Rss:" && kind != "" && len(f) >= 2 {
			kb, _ := strconv.ParseFloat(f[1], 64)
			out[kind] += kb / 1024
		}
	}
	return out
}

// fileKind classifies a mapped file of a query child.
func fileKind(path, dir, exe string) string {
	rel, err := filepath.Rel(dir, path)
	switch {
	case path == exe:
		return "binary"
	case err != nil || strings.HasPrefix(rel, ".."):
		return "other"
	case rel == engine.DBFile:
		return "hmo.db"
	case strings.HasPrefix(rel, engine.VectorDir):
		return "vectors"
	case strings.HasPrefix(rel, engine.TextDir):
		return "text"
	}
	return "other"
}

// procStatusMB reads a memory line of /proc/self/status in MiB (0 where
// there is no /proc).
func procStatusMB(key string) float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// childName names a child's profile and trace files: the mode, and the
// side restricted to.
func childName(job scaleJob) string {
	name := job.Mode
	if job.Lockstep {
		name = "lockstep-" + name
	}
	if job.NoText {
		name += "-vector"
	}
	if job.NoVector {
		name += "-text"
	}
	return name
}

// startTrace writes an execution trace of a child's timed queries to dir
// (go tool trace; each question is a task named "question").
func startTrace(dir string, job scaleJob) (func(), error) {
	return startRecording(dir, job, ".trace", trace.Start, trace.Stop)
}

// startProfile writes the CPU profile of a child's timed queries to dir,
// one file per side (mode, and the side restricted to).
func startProfile(dir string, job scaleJob) (func(), error) {
	return startRecording(dir, job, ".pprof", pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// startRecording starts a recording of the process into a new file of
// dir named for the child, with extension ext; the func it returns
// stops it and closes the file.
func startRecording(dir string, job scaleJob, ext string, start func(io.Writer) error, stop func()) (func(), error) {
	f, err := os.CreateTemp(dir, childName(job)+"-*"+ext)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { stop(); f.Close() }, nil
}
