package peers_test

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/philippgille/chromem-go"
	"github.com/viterin/vek/vek32"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/bench/peers"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/synth"
)

// The harness (make bench-peers runs it through bench/peers/run.sh):
//
//	HMO_PEERS_N       records (default 0: the benchmark is skipped)
//	HMO_PEERS_DIR     work directory (default a temporary one)
//	HMO_PEERS_ROUNDS  interleaved query rounds (default 2)
//	HMO_PEERS_IMPORT  records imported through the hmo CLI (default HMO_PEERS_N; 0 skips)
//	HMO_PEERS_NODE    node >= 24 for LanceDB and SQLite (unset: skipped loudly)
//	HMO_PEERS_NODE_MODULES  where package.json's dependencies are installed
const (
	seed       = 42 // the archive branch's scale workload: synth seed 42,
	everyday   = 150
	needles    = 50 // synth.Queries(11, 150) and the first 50 needles
	ingestStep = 1000
)

type query struct {
	Text   string    `json:"text"`
	Vec    []float32 `json:"vec"`
	Needle string    `json:"needle,omitempty"` // the code the planted record contains
}

type job struct {
	Engine, Mode, Work, Store string
}

// TestPeers builds the workload, lets every engine ingest it, then runs
// the query rounds, interleaved, and prints the table.
func TestPeers(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("HMO_PEERS_N"))
	if n <= 0 {
		t.Skip("SKIPPED LOUDLY: the peers benchmark runs only with HMO_PEERS_N set (make bench-peers)")
	}
	work := os.Getenv("HMO_PEERS_DIR")
	if work == "" {
		work = t.TempDir()
	}
	rounds := 2
	if v, err := strconv.Atoi(os.Getenv("HMO_PEERS_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	start := time.Now()
	if err := buildWorkload(work, n); err != nil {
		t.Fatal(err)
	}
	t.Logf("workload of %d records in %s (%v)", n, work, time.Since(start).Round(time.Millisecond))
	type engineRun struct {
		name string
		cmd  func(mode, store string) *exec.Cmd
	}
	goEngine := func(name string) func(string, string) *exec.Cmd {
		return func(mode, store string) *exec.Cmd {
			spec, _ := json.Marshal(job{Engine: name, Mode: mode, Work: work, Store: store})
			c := exec.Command(os.Args[0], "-test.run=^TestPeersChild$", "-test.count=1")
			c.Env = append(os.Environ(), "HMO_PEERS_JOB="+string(spec))
			return c
		}
	}
	engines := []engineRun{
		{"hmo", goEngine("hmo")},
		{"exact (vek32, 2 goroutines)", goEngine("exact")},
		{"chromem-go", goEngine("chromem-go")},
	}
	node, mods := os.Getenv("HMO_PEERS_NODE"), os.Getenv("HMO_PEERS_NODE_MODULES")
	if node == "" || mods == "" {
		t.Log("SKIPPED LOUDLY: no node >= 24 with the npm dependencies (HMO_PEERS_NODE, HMO_PEERS_NODE_MODULES): LanceDB and SQLite FTS5 + sqlite-vec are NOT measured")
	} else {
		nodeEngine := func(script, variant string) func(string, string) *exec.Cmd {
			return func(mode, store string) *exec.Cmd {
				c := exec.Command(node, script, mode, work, store, variant)
				c.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(mods, "node_modules"), "RUST_LOG=error")
				return c
			}
		}
		engines = append(engines,
			engineRun{"LanceDB", nodeEngine("lancedb.mjs", "flat")},
			engineRun{"LanceDB+IVF-PQ", nodeEngine("lancedb.mjs", "ivfpq")},
			engineRun{"sqlite-vec+FTS5 (OpenClaw)", nodeEngine("sqlite.mjs", "openclaw")},
		)
	}
	var all []peers.Result
	run := func(e engineRun, mode string) {
		store := filepath.Join(work, "stores", strings.NewReplacer(" ", "-", "(", "", ")", "", ",", "").Replace(e.name))
		c := e.cmd(mode, store)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, os.Stderr
		begin := time.Now()
		err := c.Run()
		res, perr := peers.ParseResults(bytes.NewReader(out.Bytes()))
		if err != nil || perr != nil || len(res) == 0 {
			t.Errorf("%s %s: %v %v (output: %.2000s)", e.name, mode, err, perr, out.String())
			return
		}
		for i := range res {
			res[i].Engine = e.name
			if mode == "vectors" {
				res[i] = peers.Result{Engine: e.name}
			}
			if mode == "ingest" {
				res[i].DiskMB = dirMB(store)
			}
		}
		t.Logf("%s %s: %v", e.name, mode, time.Since(begin).Round(time.Millisecond))
		all = append(all, res...)
	}
	for i, e := range engines {
		run(e, "ingest")
		if i == 0 { // hmo: its vectors become the workload's
			run(e, "vectors")
			size := n
			if v, err := strconv.Atoi(os.Getenv("HMO_PEERS_IMPORT")); err == nil {
				size = v
			}
			if size <= 0 {
				t.Log("hmo import: skipped (HMO_PEERS_IMPORT=0)")
			} else if r, err := cliImport(work, min(size, n)); err != nil {
				t.Errorf("hmo import: %v", err)
			} else if r.Engine != "" {
				all = append(all, r)
			}
		}
	}
	for r := range rounds {
		for i := range engines {
			// Interleaved: each round starts with the next engine.
			run(engines[(i+r)%len(engines)], "query")
		}
	}
	sums := peers.Summarise(all, "exact (vek32, 2 goroutines)")
	var table bytes.Buffer
	distinct, _ := readTexts(work, "records.txt")
	fmt.Fprintf(&table, "%d stream records (%d distinct: hmo stores identical texts once, the peers index the distinct records with hmo's vectors), "+
		"%d queries (%d everyday, %d needles), %d interleaved rounds, %s, %d cores shared with other work\n\n",
		n, len(distinct), everyday+needles, everyday, needles, rounds, runtime.GOARCH, runtime.NumCPU())
	peers.Table(&table, sums, "hmo")
	fmt.Print(table.String())
	if err := os.WriteFile(filepath.Join(work, "peers.md"), table.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(struct {
		Records, Rounds int
		Summaries       []peers.Summary
		Results         []peers.Result
	}{n, rounds, sums, all}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "peers.json"), js, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "peers-plot.json"), plotSpec(n, sums), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s/peers.{md,json} and peers-plot.json (go run ./tools/plot < peers-plot.json > chart.svg)", work)
}

func plotSpec(n int, sums []peers.Summary) []byte {
	type group struct {
		Label  string    `json:"label"`
		Values []float64 `json:"values"`
	}
	spec := struct {
		Title  string   `json:"title"`
		Unit   string   `json:"unit"`
		Log    bool     `json:"log"`
		Series []string `json:"series"`
		Groups []group  `json:"groups"`
	}{Title: fmt.Sprintf("peers benchmark, %d records: query medians (lower is better)", n), Unit: "ms", Log: true,
		Series: []string{"hybrid", "vector", "text"}}
	// Engines without a text side (the exact scan, chromem-go) are named
	// in the title with their vector median rather than drawn at zero.
	var vectorOnly []string
	for _, s := range sums {
		v := []float64{s.Hybrid, s.Vector, s.Text}
		if slices.ContainsFunc(v, func(x float64) bool { return math.IsNaN(x) || x <= 0 }) {
			if !math.IsNaN(s.Vector) {
				vectorOnly = append(vectorOnly, fmt.Sprintf("%s vector %.2f", s.Engine, s.Vector))
			}
			continue
		}
		spec.Groups = append(spec.Groups, group{s.Engine, v})
	}
	if len(vectorOnly) > 0 {
		spec.Title += "; " + strings.Join(vectorOnly, ", ")
	}
	b, _ := json.MarshalIndent(spec, "", " ")
	return b
}

// cliImport times hmo import (the CLI, a new store) on the stream as
// JSONL: HMO_BIN, default ../../bin/hmo (run.sh builds it).
func cliImport(work string, n int) (peers.Result, error) {
	bin := os.Getenv("HMO_BIN")
	if bin == "" {
		bin = "../../bin/hmo"
	}
	if _, err := os.Stat(bin); err != nil {
		fmt.Fprintf(os.Stderr, "peers: SKIPPED LOUDLY: no hmo binary at %s (make build): hmo import NOT measured\n", bin)
		return peers.Result{}, nil
	}
	var b bytes.Buffer
	stream := synth.New(synth.Options{Seed: seed, Records: n})
	for batch := stream.Next(ingestStep); batch != nil; batch = stream.Next(ingestStep) {
		for _, in := range batch {
			line, _ := json.Marshal(map[string]string{"scope": in.Scope, "session": in.Session, "role": in.Role,
				"time": in.Time.UTC().Format(time.RFC3339), "text": in.Text})
			b.Write(append(line, '\n'))
		}
	}
	file := filepath.Join(work, "stream.jsonl")
	if err := os.WriteFile(file, b.Bytes(), 0o600); err != nil {
		return peers.Result{}, err
	}
	store := filepath.Join(work, "stores", "hmo-import")
	if err := os.RemoveAll(store); err != nil {
		return peers.Result{}, err
	}
	start := time.Now()
	out, err := exec.Command(bin, "import", "--dir", store, file).CombinedOutput()
	if err != nil {
		return peers.Result{}, fmt.Errorf("%v: %.500s", err, out)
	}
	return peers.Result{Engine: "hmo", ImportRPS: float64(n) / time.Since(start).Seconds()}, nil
}

// buildWorkload writes texts.txt (one record a line) and queries.json
// (texts and needles). The vectors come from hmo itself: its ingest writes
// vectors.f32 (each record's vector as hmo indexed it, little-endian
// float32, row-major by stream position) and hmoQueryVectors fills the
// queries' vectors with those hmo searches with, so every engine indexes
// and searches the very same vectors.
func buildWorkload(work string, n int) error {
	if b, err := os.ReadFile(filepath.Join(work, "complete")); err == nil && string(b) == strconv.Itoa(n) {
		return nil
	}
	if err := os.MkdirAll(work, 0o700); err != nil {
		return err
	}
	var texts bytes.Buffer
	stream := synth.New(synth.Options{Seed: seed, Records: n})
	for batch := stream.Next(ingestStep); batch != nil; batch = stream.Next(ingestStep) {
		for _, in := range batch {
			texts.WriteString(in.Text + "\n")
		}
	}
	if err := os.WriteFile(filepath.Join(work, "texts.txt"), texts.Bytes(), 0o600); err != nil {
		return err
	}
	var qs []query
	for _, s := range synth.Queries(11, everyday) {
		qs = append(qs, query{Text: s})
	}
	for i, nd := range synth.New(synth.Options{Seed: seed, Records: n}).Needles() {
		if i == needles {
			break
		}
		qs = append(qs, query{Text: nd.Query, Needle: strings.TrimPrefix(nd.Query, "locker combination ")})
	}
	if err := writeQueries(work, qs); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(work, "complete"), []byte(strconv.Itoa(n)), 0o600)
}

func writeQueries(work string, qs []query) error {
	b, err := json.Marshal(qs)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(work, "queries.json"), b, 0o600)
}

// readTexts reads texts.txt (the stream) or records.txt (the distinct
// records hmo stored, the rows every peer indexes).
func readTexts(work, name string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(work, name))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), nil
}

func readQueries(work string) ([]query, error) {
	b, err := os.ReadFile(filepath.Join(work, "queries.json"))
	if err != nil {
		return nil, err
	}
	var qs []query
	return qs, json.Unmarshal(b, &qs)
}

func readVectors(work string, dims int) ([]float32, error) {
	b, err := os.ReadFile(filepath.Join(work, "vectors.f32"))
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, nil
}

func dirMB(dir string) float64 {
	var sum int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				sum += info.Size()
			}
		}
		return nil
	})
	return float64(sum) / (1 << 20)
}

// rssMB is the process's resident set (VmRSS).
func rssMB() float64 { return statusMB("VmRSS:") }

// anonMB is the anonymous share of the process's resident set (RssAnon).
func anonMB() float64 { return statusMB("RssAnon:") }

// statusMB reads a kB field of /proc/self/status, in MB; 0 when absent.
func statusMB(field string) float64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// TestPeersChild runs one engine's job in its own process.
func TestPeersChild(t *testing.T) {
	spec := os.Getenv("HMO_PEERS_JOB")
	if spec == "" {
		t.Skip("a child of TestPeers")
	}
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		t.Fatal(err)
	}
	var res peers.Result
	var err error
	switch j.Engine + " " + j.Mode {
	case "hmo ingest":
		res, err = hmoIngest(j)
	case "hmo vectors":
		res, err = hmoQueryVectors(j)
	case "hmo query":
		res, err = hmoQuery(j)
	case "exact ingest":
		res = peers.Result{Engine: "exact", IngestRPS: 0}
	case "exact query":
		res, err = exactQuery(j)
	case "chromem-go ingest":
		res, err = chromemIngest(j)
	case "chromem-go query":
		res, err = chromemQuery(j)
	default:
		err = fmt.Errorf("unknown job %s %s", j.Engine, j.Mode)
	}
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	fmt.Printf("RESULT %s\n", b)
}

// capture is hmo's default vector index (hmo.OpenVectorIndex, what a
// user's store opens) with a recorder: the vectors hmo indexes and the
// query vectors it searches with. It hides the index's optional
// interfaces but FinishBuilds, so it is used only where the workload is
// built: in hmo's timed ingest (its copy of each vector counts against
// hmo), never where hmo is queried.
type capture struct {
	engine.VectorIndex
	mu      sync.Mutex
	docs    map[uint64][]float32
	queries [][]float32
}

func (c *capture) Apply(adds []engine.VectorDoc, deletes []uint64, watermark uint64) error {
	c.mu.Lock()
	for _, d := range adds {
		c.docs[d.ID] = slices.Clone(d.Vector)
	}
	c.mu.Unlock()
	return c.VectorIndex.Apply(adds, deletes, watermark)
}

func (c *capture) Search(q []float32, k int) ([]engine.VectorHit, error) {
	hits, err := c.VectorIndex.Search(q, k)
	c.mu.Lock()
	c.queries = append(c.queries, slices.Clone(q))
	c.mu.Unlock()
	return hits, err
}

// FinishBuilds finishes the index's builds (engine.IndexFinisher), the
// one optional interface the timed ingest needs.
func (c *capture) FinishBuilds(ctx context.Context, progress func(done, total int64)) error {
	if f, ok := c.VectorIndex.(engine.IndexFinisher); ok {
		return f.FinishBuilds(ctx, progress)
	}
	return nil
}

func (c *capture) open(dir string, dims int) (engine.VectorIndex, error) {
	inner, err := hmo.OpenVectorIndex(dir, dims)
	if err != nil {
		return nil, err
	}
	c.VectorIndex = inner
	return c, nil
}

// hmoIngest stores the stream through the Go API (durable Remember batches)
// and writes vectors.f32 from what hmo indexed.
func hmoIngest(j job) (peers.Result, error) {
	if err := os.RemoveAll(j.Store); err != nil {
		return peers.Result{}, err
	}
	texts, err := readTexts(j.Work, "texts.txt")
	if err != nil {
		return peers.Result{}, err
	}
	c := &capture{docs: map[uint64][]float32{}}
	start := time.Now()
	e, err := hmo.Open(j.Store, &engine.Options{Mode: engine.ModeFlat, OpenVectorIndex: c.open})
	if err != nil {
		return peers.Result{}, err
	}
	// The Go API's bulk path, as the peers' batch adds: RememberBatches
	// prepares each batch of ingestStep while the one before commits.
	stream := synth.New(synth.Options{Seed: seed, Records: len(texts)})
	batches := func(yield func(engine.Batch) bool) {
		for batch := stream.Next(ingestStep); batch != nil; batch = stream.Next(ingestStep) {
			if !yield(engine.Batch{Inputs: batch}) {
				return
			}
		}
	}
	var ids []uint64
	_, err = e.RememberBatches(context.Background(), batches, func(i int, out []engine.Stored) {
		for _, s := range out {
			ids = append(ids, s.ID)
		}
	})
	if err == nil {
		// The vector index's builds are finished here, as hmo import
		// finishes them and as the peers' ingest includes their index
		// builds. A build left to the background stops at Close and
		// starts again at the next Open: each query process holds the
		// store a few seconds, so none would finish it, and every query
		// would run beside it on the unpartitioned scan.
		err = e.FinishBuilds(context.Background(), nil)
	}
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	if err == nil && len(ids) != len(texts) {
		err = fmt.Errorf("RememberBatches returned %d ids for %d inputs", len(ids), len(texts))
	}
	if err != nil {
		return peers.Result{}, err
	}
	if len(c.docs) < len(ids) {
		// The vector index is brought up to date at its first open, not
		// during Remember: open it now (timed: the store answers a vector
		// search only then) and record what it indexes.
		e, err := hmo.Open(j.Store, &engine.Options{Mode: engine.ModeFlat, OpenVectorIndex: c.open})
		if err != nil {
			return peers.Result{}, err
		}
		err = e.OpenVectorIndex()
		if err == nil {
			err = e.FinishBuilds(context.Background(), nil) // see above
		}
		if cerr := e.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return peers.Result{}, err
		}
	}
	res := peers.Result{Engine: "hmo", IngestRPS: float64(len(texts)) / time.Since(start).Seconds()}
	// Identical texts are one record in hmo (dedup): the peers index the
	// distinct records, in the order hmo stored them.
	var rows []uint64
	var recs, buf bytes.Buffer
	seen := map[uint64]bool{}
	for p, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		v, ok := c.docs[id]
		if !ok {
			return res, fmt.Errorf("hmo never indexed the vector of record %d (position %d): cannot export the workload's vectors", id, p)
		}
		rows = append(rows, id)
		recs.WriteString(texts[p] + "\n")
		for _, x := range v {
			buf.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(x)))
		}
	}
	idJSON, _ := json.Marshal(rows)
	for name, data := range map[string][]byte{"hmo-ids.json": idJSON, "records.txt": recs.Bytes(), "vectors.f32": buf.Bytes()} {
		if err := os.WriteFile(filepath.Join(j.Work, name), data, 0o600); err != nil {
			return res, err
		}
	}
	return res, nil
}

// hmoQueryVectors records the vector hmo searches with for each query.
func hmoQueryVectors(j job) (peers.Result, error) {
	qs, err := readQueries(j.Work)
	if err != nil {
		return peers.Result{}, err
	}
	c := &capture{docs: map[uint64][]float32{}}
	e, err := hmo.Open(j.Store, &engine.Options{Mode: engine.ModeFlat, OpenVectorIndex: c.open, NoText: true})
	if err != nil {
		return peers.Result{}, err
	}
	defer e.Close()
	for i := range qs {
		before := len(c.queries)
		if _, err := e.Recall(context.Background(), engine.Query{Text: qs[i].Text, K: 10}); err != nil {
			return peers.Result{}, err
		}
		if len(c.queries) != before+1 {
			return peers.Result{}, fmt.Errorf("query %q searched the vector index %d times", qs[i].Text, len(c.queries)-before)
		}
		qs[i].Vec = c.queries[before]
	}
	return peers.Result{Engine: "hmo"}, writeQueries(j.Work, qs)
}

// hmoQuery opens the store once per side (hybrid, vector only, text
// only) with hmo's defaults, as a user's store opens, and runs the
// queries; the hybrid open is the cold one. The vector side's recall is
// that of the vector search hmo's recall runs (Engine.NearestVectors: the
// index's candidates, rescored from the stored vectors where the index
// keeps approximations), taken outside the timed query.
func hmoQuery(j job) (peers.Result, error) {
	qs, err := readQueries(j.Work)
	if err != nil {
		return peers.Result{}, err
	}
	res := peers.Result{Engine: "hmo"}
	ctx := context.Background()
	var idPos map[uint64]int // record id -> row, for the vector side's recall
	for _, side := range []string{"hybrid", "vector", "text"} {
		if side == "vector" {
			// Read only now: the hybrid side's resident set is hmo's,
			// not that of the harness's map of 1M ids.
			if idPos, err = readIDPositions(j.Work); err != nil {
				return res, err
			}
		}
		o := &engine.Options{Mode: engine.ModeFlat, NoText: side == "vector", NoVector: side == "text"}
		start := time.Now()
		e, err := hmo.Open(j.Store, o)
		if err != nil {
			return res, err
		}
		for i, q := range qs {
			begin := time.Now()
			hits, err := e.Recall(ctx, engine.Query{Text: q.Text, K: 10})
			took := time.Since(begin)
			if err != nil {
				e.Close()
				return res, err
			}
			if i == 0 && side == "hybrid" {
				res.ColdMs = ms(time.Since(start))
			}
			switch side {
			case "hybrid":
				res.HybridMs = append(res.HybridMs, ms(took))
				if q.Needle != "" {
					res.Needles++
					for _, h := range hits {
						if strings.Contains(h.Record.Text, q.Needle) {
							res.NeedleHits++
							break
						}
					}
				}
			case "vector":
				res.VectorMs = append(res.VectorMs, ms(took))
				near, err := e.NearestVectors(q.Vec, 10)
				if err != nil {
					e.Close()
					return res, err
				}
				var top []int
				for _, h := range near {
					if p, ok := idPos[h.ID]; ok {
						top = append(top, p)
					}
				}
				res.VectorTop = append(res.VectorTop, top)
			case "text":
				res.TextMs = append(res.TextMs, ms(took))
			}
		}
		if side == "hybrid" {
			res.RSSMB, res.AnonMB = rssMB(), anonMB()
		}
		if err := e.Close(); err != nil {
			return res, err
		}
	}
	return res, nil
}

// exactQuery is the limit: vek32.Dot over contiguous vectors, two goroutines.
func exactQuery(j job) (peers.Result, error) {
	start := time.Now()
	qs, err := readQueries(j.Work)
	if err != nil {
		return peers.Result{}, err
	}
	dims := len(qs[0].Vec)
	vecs, err := readVectors(j.Work, dims)
	if err != nil {
		return peers.Result{}, err
	}
	n := len(vecs) / dims
	res := peers.Result{Engine: "exact"}
	for i, q := range qs {
		begin := time.Now()
		top := exactTop(vecs, n, dims, q.Vec, 10, 2)
		res.VectorMs = append(res.VectorMs, ms(time.Since(begin)))
		if i == 0 {
			res.ColdMs = ms(time.Since(start))
		}
		res.VectorTop = append(res.VectorTop, top)
	}
	res.RSSMB, res.AnonMB = rssMB(), anonMB()
	return res, nil
}

type scored struct {
	pos   int
	score float32
}
type minHeap []scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any          { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }

func exactTop(vecs []float32, n, dims int, q []float32, k, workers int) []int {
	parts := make([]minHeap, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := make(minHeap, 0, k+1)
			for i := w * n / workers; i < (w+1)*n/workers; i++ {
				s := vek32.Dot(vecs[i*dims:(i+1)*dims], q)
				if len(h) < k {
					heap.Push(&h, scored{i, s})
				} else if s > h[0].score {
					h[0] = scored{i, s}
					heap.Fix(&h, 0)
				}
			}
			parts[w] = h
		}()
	}
	wg.Wait()
	var all minHeap
	for _, p := range parts {
		all = append(all, p...)
	}
	// Highest first.
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			if all[j].score > all[i].score {
				all[i], all[j] = all[j], all[i]
			}
		}
	}
	out := make([]int, 0, k)
	for _, s := range all[:min(k, len(all))] {
		out = append(out, s.pos)
	}
	return out
}

func noEmbed(context.Context, string) ([]float32, error) {
	return nil, fmt.Errorf("peers: chromem-go gets the workload's vectors")
}

func chromemIngest(j job) (peers.Result, error) {
	if err := os.RemoveAll(j.Store); err != nil {
		return peers.Result{}, err
	}
	texts, err := readTexts(j.Work, "records.txt")
	if err != nil {
		return peers.Result{}, err
	}
	qs, err := readQueries(j.Work)
	if err != nil {
		return peers.Result{}, err
	}
	dims := len(qs[0].Vec)
	vecs, err := readVectors(j.Work, dims)
	if err != nil {
		return peers.Result{}, err
	}
	start := time.Now()
	db, err := chromem.NewPersistentDB(j.Store, false)
	if err != nil {
		return peers.Result{}, err
	}
	col, err := db.CreateCollection("memory", nil, noEmbed)
	if err != nil {
		return peers.Result{}, err
	}
	for off := 0; off < len(texts); off += ingestStep {
		docs := make([]chromem.Document, 0, ingestStep)
		for i := off; i < min(off+ingestStep, len(texts)); i++ {
			docs = append(docs, chromem.Document{ID: strconv.Itoa(i), Content: texts[i], Embedding: vecs[i*dims : (i+1)*dims]})
		}
		if err := col.AddDocuments(context.Background(), docs, runtime.NumCPU()); err != nil {
			return peers.Result{}, err
		}
	}
	return peers.Result{Engine: "chromem-go", IngestRPS: float64(len(texts)) / time.Since(start).Seconds()}, nil
}

func chromemQuery(j job) (peers.Result, error) {
	qs, err := readQueries(j.Work)
	if err != nil {
		return peers.Result{}, err
	}
	start := time.Now()
	db, err := chromem.NewPersistentDB(j.Store, false)
	if err != nil {
		return peers.Result{}, err
	}
	col := db.GetCollection("memory", noEmbed)
	if col == nil {
		return peers.Result{}, fmt.Errorf("chromem-go: no collection in %s", j.Store)
	}
	res := peers.Result{Engine: "chromem-go"}
	for i, q := range qs {
		begin := time.Now()
		hits, err := col.QueryEmbedding(context.Background(), q.Vec, 10, nil, nil)
		if err != nil {
			return res, err
		}
		res.VectorMs = append(res.VectorMs, ms(time.Since(begin)))
		if i == 0 {
			res.ColdMs = ms(time.Since(start))
		}
		top := make([]int, 0, len(hits))
		for _, h := range hits {
			p, _ := strconv.Atoi(h.ID)
			top = append(top, p)
		}
		res.VectorTop = append(res.VectorTop, top)
	}
	res.RSSMB, res.AnonMB = rssMB(), anonMB()
	return res, nil
}

// readIDPositions maps each hmo record id of hmo-ids.json to its row in
// the workload's vectors.
func readIDPositions(work string) (map[uint64]int, error) {
	idJSON, err := os.ReadFile(filepath.Join(work, "hmo-ids.json"))
	if err != nil {
		return nil, err
	}
	var ids []uint64
	if err := json.Unmarshal(idJSON, &ids); err != nil {
		return nil, err
	}
	idPos := make(map[uint64]int, len(ids))
	for row, id := range ids {
		idPos[id] = row
	}
	return idPos, nil
}
