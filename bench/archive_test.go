package bench_test

import (
	"bufio"
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"math"
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
	bolt "go.etcd.io/bbolt"
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

// vectorRecall compares the vector search of a flat recall
// (Engine.NearestVectors: the archive's vector index, its candidates
// rescored from bbolt when it keeps int8 rows only) with a brute-force
// scalar scan of bbolt's vectors, the store's only float32 copy, read
// after the store is closed, on the embedded embedder's vectors of
// everyday queries.
func vectorRecall(dir string) (float64, error) {
	emb, err := static.New(nil)
	if err != nil {
		return 0, err
	}
	qs, err := emb.Embed(context.Background(), synth.Queries(3, recallQueries))
	if err != nil {
		return 0, err
	}
	qs = slices.DeleteFunc(qs, func(q []float32) bool { return q == nil }) // no known word
	if len(qs) == 0 {
		return 0, fmt.Errorf("no query embedded")
	}
	e, err := hmo.Open(dir, &engine.Options{Mode: engine.ModeFlat})
	if err != nil {
		return 0, err
	}
	got := make([][]engine.VectorHit, len(qs))
	for i, q := range qs {
		if got[i], err = e.NearestVectors(q, 10); err != nil {
			e.Close()
			return 0, err
		}
	}
	if err := e.Close(); err != nil {
		return 0, err
	}
	want, err := bruteTop(filepath.Join(dir, "hmo.db"), qs, 10)
	if err != nil {
		return 0, err
	}
	var sum float64
	for i := range qs {
		hit := 0
		for _, h := range got[i] {
			if slices.Contains(want[i], h.ID) {
				hit++
			}
		}
		sum += float64(hit) / float64(max(len(want[i]), 1))
	}
	return sum / float64(len(qs)), nil
}

// bruteTop is the reference: for each query, the k ids of bbolt's
// vectors bucket with the highest cosine, a scalar dot product with every
// stored vector (normalised in float64), independent of the SIMD kernel
// and of the vector index.
func bruteTop(db string, qs [][]float32, k int) ([][]uint64, error) {
	bdb, err := bolt.Open(db, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	defer bdb.Close()
	hs := make([]idHeap, len(qs))
	err = bdb.View(func(tx *bolt.Tx) error {
		vb := tx.Bucket([]byte("vectors"))
		if vb == nil {
			return fmt.Errorf("no vectors bucket")
		}
		v := make([]float64, len(qs[0]))
		return vb.ForEach(func(key, b []byte) error {
			if len(b) != 4*len(v) || len(key) != 8 {
				return nil
			}
			var norm float64
			for i := range v {
				v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
				norm += v[i] * v[i]
			}
			if norm == 0 {
				return nil
			}
			id := binary.BigEndian.Uint64(key)
			for qi, q := range qs {
				var s float64
				for i := range v {
					s += v[i] * float64(q[i])
				}
				s /= math.Sqrt(norm)
				h := &hs[qi]
				if h.Len() < k {
					heap.Push(h, idScore{id, s})
				} else if s > (*h)[0].s {
					(*h)[0] = idScore{id, s}
					heap.Fix(h, 0)
				}
			}
			return nil
		})
	})
	out := make([][]uint64, len(qs))
	for qi, h := range hs {
		for _, v := range h {
			out[qi] = append(out[qi], v.id)
		}
	}
	return out, err
}

type idScore struct {
	id uint64
	s  float64
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
	// A new store's vector index is written at its first open (the first
	// vector search), not by Remember: the store is ingested only once
	// that is done, so the timed ingest includes it.
	catchUp := time.Now()
	if e, err = hmo.Open(dir, &engine.Options{Mode: mode}); err != nil {
		b.Fatal(err)
	}
	err = e.OpenVectorIndex()
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	b.ReportMetric(float64(time.Since(catchUp).Milliseconds()), prefix+"ingest-vector-index-ms")
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
