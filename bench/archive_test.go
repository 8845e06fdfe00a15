package bench_test

import (
	"bufio"
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/jsonl"
	"github.com/hmo-dev/hmo/localllm/static"
	"github.com/hmo-dev/hmo/synth"
	"github.com/hmo-dev/hmo/vecfile"
)

// The archive metrics of issue 11, measured on the scale store: the
// vector index's recall@10 against an independent brute-force scan, the
// cold CLI recall (a new process opens the store and answers one query),
// and the CLI import rate with the first recall after it.

const (
	envHmoBin     = "HMO_BIN"         // the hmo binary; default ../bin/hmo (make bench builds it)
	envImportSize = "HMO_IMPORT_SIZE" // records imported through the CLI; default the scale size, 0 skips
	recallQueries = 50
	coldRuns      = 5
)

// cpuTime is the CPU time (user and system) this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func archiveMetrics(b *testing.B, dir string, n int) {
	if r, err := vectorRecall(dir); err != nil {
		b.Errorf("vector recall: %v", err)
	} else {
		b.ReportMetric(r, "vector-recall@10")
	}
	bin := hmoBin()
	if bin == "" {
		b.Logf("SKIPPED LOUDLY: no hmo binary at ../bin/hmo or $%s (make bench builds it): no CLI figures", envHmoBin)
		return
	}
	q := synth.Queries(5, coldRuns)
	var cold, coldCPU []time.Duration
	for i := range coldRuns {
		d, c, err := cliRecall(bin, dir, q[i])
		if err != nil {
			b.Fatalf("cold recall: %v", err)
		}
		cold, coldCPU = append(cold, d), append(coldCPU, c)
	}
	slices.Sort(cold)
	slices.Sort(coldCPU)
	b.ReportMetric(ms(cold[len(cold)/2]), "cold-cli-recall-ms")
	b.ReportMetric(ms(coldCPU[len(coldCPU)/2]), "cold-cli-recall-cpu-ms")
	size := n
	if v := os.Getenv(envImportSize); v != "" {
		size, _ = strconv.Atoi(v)
	}
	if size > 0 {
		rate, first, err := cliImport(b, bin, size)
		if err != nil {
			b.Fatalf("import: %v", err)
		}
		b.ReportMetric(rate, "cli-import-rec/s")
		b.ReportMetric(ms(first), "first-recall-after-import-ms")
		b.ReportMetric(float64(size), "import-records")
	}
}

func hmoBin() string {
	if p := os.Getenv(envHmoBin); p != "" {
		return p
	}
	p, _ := filepath.Abs(filepath.Join("..", "bin", "hmo"))
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// cliRecall runs one hmo recall and returns its wall time and CPU time
// (user and system): the machine is shared, the CPU time is steadier.
func cliRecall(bin, dir, query string) (time.Duration, time.Duration, error) {
	start := time.Now()
	cmd := exec.Command(bin, "recall", "--dir", dir, "-k", "10", query)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, out)
	}
	return time.Since(start), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// cliImport writes n synthetic records as JSONL, imports them into a new
// store with the CLI and times the import and the first recall after it.
func cliImport(b *testing.B, bin string, n int) (float64, time.Duration, error) {
	tmp := b.TempDir()
	file := filepath.Join(tmp, "records.jsonl")
	f, err := os.Create(file)
	if err != nil {
		return 0, 0, err
	}
	w := bufio.NewWriter(f)
	jw := jsonl.NewWriter(w)
	stream := synth.New(synth.Options{Seed: 42, Records: n})
	id := uint64(0)
	for batch := stream.Next(ingestBatch); batch != nil; batch = stream.Next(ingestBatch) {
		for _, in := range batch {
			id++
			r := engine.Record{ID: id, Scope: in.Scope, Session: in.Session, Role: in.Role, Time: in.Time, Text: in.Text}
			if err := jw.Write(&r); err != nil {
				return 0, 0, err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return 0, 0, err
	}
	if err := f.Close(); err != nil {
		return 0, 0, err
	}
	store := filepath.Join(tmp, "store")
	if out, err := exec.Command(bin, "init", "--dir", store).CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("init: %v: %s", err, out)
	}
	start := time.Now()
	if out, err := exec.Command(bin, "import", "--dir", store, "--format", "jsonl", file).CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, out)
	}
	rate := float64(n) / time.Since(start).Seconds()
	first, _, err := cliRecall(bin, store, synth.Queries(9, 1)[0])
	return rate, first, err
}

// vectorRecall compares the archive's vector index (opened on its own,
// the store closed) with a brute-force scalar scan of the same vectors,
// on the embedded embedder's vectors of everyday queries.
func vectorRecall(dir string) (float64, error) {
	id, err := engine.ReadIdentity(dir, time.Second)
	if err != nil {
		return 0, err
	}
	x, err := vecfile.Open(filepath.Join(dir, engine.VectorDir), &vecfile.Options{Dims: id.Dims})
	if err != nil {
		return 0, err
	}
	defer x.Close()
	emb, err := static.New(nil)
	if err != nil {
		return 0, err
	}
	qv, err := emb.Embed(context.Background(), synth.Queries(3, recallQueries))
	if err != nil {
		return 0, err
	}
	var sum float64
	used := 0
	for _, q := range qv {
		got, err := x.Search(q, 10)
		if err != nil {
			continue // a query with no known word embeds to nothing
		}
		want := bruteTop(x, q, 10)
		hit := 0
		for _, h := range got {
			if slices.Contains(want, h.ID) {
				hit++
			}
		}
		sum += float64(hit) / float64(len(want))
		used++
	}
	if used == 0 {
		return 0, fmt.Errorf("no query embedded")
	}
	return sum / float64(used), nil
}

// bruteTop is the reference: a scalar dot product with every stored
// vector, independent of the SIMD kernel.
func bruteTop(x *vecfile.Index, q []float32, k int) []uint64 {
	h := &idHeap{}
	x.Range(func(id uint64, v []float32) bool {
		var s float32
		for i := range v {
			s += v[i] * q[i]
		}
		if h.Len() < k {
			heap.Push(h, idScore{id, s})
		} else if s > (*h)[0].s {
			(*h)[0] = idScore{id, s}
			heap.Fix(h, 0)
		}
		return true
	})
	out := make([]uint64, h.Len())
	for i, v := range *h {
		out[i] = v.id
	}
	return out
}

type idScore struct {
	id uint64
	s  float32
}

type idHeap []idScore

func (h idHeap) Len() int           { return len(h) }
func (h idHeap) Less(i, j int) bool { return h[i].s < h[j].s }
func (h idHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *idHeap) Push(v any)        { *h = append(*h, v.(idScore)) }
func (h *idHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// workload is the query set of the peers benchmark: 150 everyday queries
// and the 50 first needles' queries, each with the id of its answer (0
// for the everyday ones, which have none).
func workload(dir string, n int) ([]string, []uint64, error) {
	positions, err := readPositions(dir)
	if err != nil {
		return nil, nil, err
	}
	qs := synth.Queries(11, 150)
	src := make([]uint64, len(qs))
	for i, nd := range synth.New(synth.Options{Seed: 42, Records: n}).Needles() {
		if i == 50 || nd.Index >= len(positions) {
			break
		}
		qs, src = append(qs, nd.Query), append(src, positions[nd.Index])
	}
	return qs, src, nil
}

// positionsFile, in a scale store, holds the record id of each stream
// position (8 bytes each, little-endian): identical texts are stored
// once, so ids and positions differ.
const positionsFile = "positions"

func writePositions(dir string, ids []uint64) error {
	b := make([]byte, 0, 8*len(ids))
	for _, id := range ids {
		b = binary.LittleEndian.AppendUint64(b, id)
	}
	return os.WriteFile(filepath.Join(dir, positionsFile), b, 0o600)
}

func readPositions(dir string) ([]uint64, error) {
	b, err := os.ReadFile(filepath.Join(dir, positionsFile))
	if err != nil {
		return nil, fmt.Errorf("scale store without positions (built before dedup): %w", err)
	}
	out := make([]uint64, len(b)/8)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out, nil
}

func distinct(ids []uint64) map[uint64]bool {
	m := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// flatIngest times the ingestion of n records into a new flat store
// through the Go API, the store discarded: Remember batches of
// ingestBatch (the ingest figure of the peers benchmark), then the same
// batches through RememberBatches (the bulk path, prefixed flat-bulk-).
func flatIngest(b *testing.B, n int) {
	ingest(b, n, engine.ModeFlat, false, "flat-")
	ingest(b, n, engine.ModeFlat, true, "flat-bulk-")
}

// ingest times the ingestion of n records into a new store of the given
// mode through the Go API and reports its figures, each name prefixed:
// one Remember per batch of ingestBatch or, with bulk, the same batches
// through one RememberBatches.
func ingest(b *testing.B, n int, mode engine.Mode, bulk bool, prefix string) {
	dir := filepath.Join(b.TempDir(), string(mode))
	e, err := hmo.Open(dir, &engine.Options{Mode: mode})
	if err != nil {
		b.Fatal(err)
	}
	start, cpu0 := time.Now(), cpuTime()
	stream := synth.New(synth.Options{Seed: 42, Records: n})
	var all []uint64
	if bulk {
		batches := func(yield func(engine.Batch) bool) {
			for in := stream.Next(ingestBatch); in != nil; in = stream.Next(ingestBatch) {
				if !yield(engine.Batch{Inputs: in}) {
					return
				}
			}
		}
		_, err = e.RememberBatches(context.Background(), batches, func(_ int, out []engine.Stored) {
			for _, s := range out {
				all = append(all, s.ID)
			}
		})
	} else {
		for batch := stream.Next(ingestBatch); batch != nil && err == nil; batch = stream.Next(ingestBatch) {
			var ids []uint64
			ids, err = e.Remember(context.Background(), batch...)
			all = append(all, ids...)
		}
	}
	if err != nil {
		e.Close()
		b.Fatal(err)
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	b.ReportMetric(float64(n)/took.Seconds(), prefix+"ingest-rec/s")
	b.ReportMetric(float64(len(distinct(all)))/took.Seconds(), prefix+"ingest-stored/s")
	b.ReportMetric(1e6*(cpuTime()-cpu0).Seconds()/float64(n), prefix+"ingest-cpu-us/rec")
	b.ReportMetric(float64(engine.DiskBytes(dir))/float64(len(distinct(all))), prefix+"disk-bytes/rec")
}

// BenchmarkIngest measures ingest alone, flat (the figure BenchmarkScale
// reports as flat-ingest-rec/s) and tiered, through Remember batches
// (path=remember) and through RememberBatches (path=bulk), for each size
// of HMO_SCALE_SIZES (default 100000), without the query and memory runs
// around it. -bench 'Ingest/mode=flat/path=bulk' runs one of them.
func BenchmarkIngest(b *testing.B) {
	for _, mode := range []engine.Mode{engine.ModeFlat, engine.ModeTiered} {
		for _, bulk := range []bool{false, true} {
			path := "remember"
			if bulk {
				path = "bulk"
			}
			for _, n := range scaleSizes() {
				b.Run(fmt.Sprintf("mode=%s/path=%s/records=%d", mode, path, n), func(b *testing.B) {
					for range b.N {
						ingest(b, n, mode, bulk, "")
					}
				})
			}
		}
	}
}
