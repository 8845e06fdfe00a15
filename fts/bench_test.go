package fts_test

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
	"github.com/hmo-dev/hmo/synth"
)

func TestMain(m *testing.M) {
	code := m.Run()
	benchIndex.cleanup()
	os.Exit(code)
}

// Parameters of the synthetic corpus.
const (
	benchDocs      = 100_000
	benchVocab     = 50_000 // distinct words
	benchZipfS     = 1.07   // Zipf exponent of word frequencies
	benchBatch     = 2048   // docs per Apply, as the engine syncs
	benchQueries   = 500
	benchScopes    = 4
	benchPerSesson = 20 // docs per session
)

// commonWords take the top Zipf ranks, so stop-word handling is exercised
// as with real text.
var commonWords = strings.Fields(`the i to and a you it of that in is was my
for have me we on but so with what this just be not do are like it's it’s
they at your all about he she about get can if know one out there think
time when go really yeah no up from how good had did been would them were`)

// corpus generates sentence-like text: words drawn from a vocabulary with
// Zipf-distributed frequencies, the most frequent being common English
// words and the rest synthetic ones.
type corpus struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newCorpus(seed uint64) *corpus {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := &corpus{r: r, zipf: rand.NewZipf(r, benchZipfS, 1, benchVocab-1)}
	c.vocab = append(c.vocab, commonWords...)
	syll := []string{"ka", "lo", "mi", "ren", "tas", "vo", "shi", "pel", "dor", "un", "bri", "gal", "ne", "tho", "zu", "ar"}
	seen := map[string]bool{}
	for len(c.vocab) < benchVocab {
		var w strings.Builder
		for range 2 + r.IntN(3) {
			w.WriteString(syll[r.IntN(len(syll))])
		}
		if !seen[w.String()] {
			seen[w.String()] = true
			c.vocab = append(c.vocab, w.String())
		}
	}
	return c
}

// text returns n words.
func (c *corpus) text(n int) string {
	words := make([]string, n)
	for i := range words {
		words[i] = c.vocab[c.zipf.Uint64()]
	}
	return strings.Join(words, " ")
}

// benchState is the 100K-document index shared by the benchmarks, built
// on first use and removed by TestMain.
type benchState struct {
	once    sync.Once
	dir     string
	x       *fts.Index
	build   time.Duration
	bytes   int64
	queries []string
	err     error
}

var benchIndex benchState

func (bs *benchState) cleanup() {
	if bs.x != nil {
		_ = bs.x.Close()
	}
	if bs.dir != "" {
		_ = os.RemoveAll(bs.dir)
	}
}

func loadBenchIndex(b *testing.B) *fts.Index {
	bi := &benchIndex
	bi.once.Do(func() { bi.err = buildBenchIndex() })
	if bi.err != nil {
		b.Fatal(bi.err)
	}
	return bi.x
}

func buildBenchIndex() error {
	bi := &benchIndex
	dir, err := os.MkdirTemp("", "fts-bench-")
	if err != nil {
		return err
	}
	bi.dir = dir
	c := newCorpus(1)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	start := time.Now()
	x, err := fts.Open(filepath.Join(dir, "text"), nil)
	if err != nil {
		return err
	}
	bi.x = x
	docs := make([]engine.TextDoc, 0, benchBatch)
	for i := range benchDocs {
		docs = append(docs, engine.TextDoc{
			ID:      uint64(i + 1),
			Text:    c.text(10 + c.r.IntN(11)),
			Scope:   fmt.Sprintf("scope%d", i%benchScopes),
			Session: fmt.Sprintf("s%d", i/benchPerSesson),
			Time:    base.Add(time.Duration(i) * time.Minute),
		})
		if len(docs) == benchBatch || i == benchDocs-1 {
			if err := x.Apply(docs, nil, uint64(i+1)); err != nil {
				return err
			}
			docs = docs[:0]
		}
	}
	bi.build = time.Since(start)
	bi.bytes, err = dirSize(dir)
	if err != nil {
		return err
	}
	q := newCorpus(2)
	q.vocab = c.vocab // same words, another stream
	for range benchQueries {
		bi.queries = append(bi.queries, q.text(3+q.r.IntN(4)))
	}
	return nil
}

func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}

// BenchmarkSearch searches the 100K-document index with 3-6 word queries
// and reports the median and 99th percentile latency besides the mean.
func BenchmarkSearch(b *testing.B) {
	x := loadBenchIndex(b)
	queries := benchIndex.queries
	cases := []struct {
		name string
		k    int
		f    engine.TextFilter
	}{
		{"k=10", 10, engine.TextFilter{}},
		{"k=50", 50, engine.TextFilter{}},
		{"k=10/scope", 10, engine.TextFilter{Scope: "scope1"}},
		{"k=10/session", 10, engine.TextFilter{Session: "s77"}},
		{"k=10/week", 10, engine.TextFilter{
			From: time.Date(2024, 1, 8, 0, 0, 0, 0, time.UTC),
			To:   time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC),
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			ctx := context.Background()
			i := 0
			for b.Loop() {
				start := time.Now()
				if _, err := x.Search(ctx, queries[i%len(queries)], tc.k, tc.f); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				i++
			}
			slices.Sort(lat)
			b.ReportMetric(benchIndex.build.Seconds(), "build-s")
			b.ReportMetric(float64(benchIndex.bytes)/(1<<20), "disk-MiB")
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

// BenchmarkOpen measures reopening the 100K-document index, with and
// without the checksum pass over its segment files.
func BenchmarkOpen(b *testing.B) {
	loadBenchIndex(b)
	dir := filepath.Join(benchIndex.dir, "text")
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(benchIndex.x.Close())
	defer func() {
		x, err := fts.Open(dir, nil)
		must(err)
		benchIndex.x = x
	}()
	for _, skip := range []bool{false, true} {
		b.Run(fmt.Sprintf("skipverify=%v", skip), func(b *testing.B) {
			for b.Loop() {
				x, err := fts.Open(dir, &fts.Options{SkipVerify: skip})
				must(err)
				must(x.Close())
			}
		})
	}
}

// BenchmarkApply measures one Apply (persisted before it returns) of n
// new documents into an empty index.
func BenchmarkApply(b *testing.B) {
	for _, n := range []int{1, 64, benchBatch} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			x := open(b, nil)
			c := newCorpus(3)
			var id, wm uint64
			for b.Loop() {
				b.StopTimer()
				docs := make([]engine.TextDoc, n)
				for i := range docs {
					id++
					docs[i] = engine.TextDoc{ID: id, Text: c.text(15)}
				}
				wm++
				b.StartTimer()
				if err := x.Apply(docs, nil, wm); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// cpuTime is the CPU time the process used so far: steadier than wall
// time on a shared machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// memoryDocs are n documents over a Zipf-distributed vocabulary, the size
// of HMO's two tiers by default.
func memoryDocs(n int) ([]engine.TextDoc, []string) {
	r := rand.New(rand.NewPCG(7, 8))
	z := rand.NewZipf(rand.New(rand.NewPCG(9, 10)), 1.1, 2, 5000)
	text := func(k int) string {
		var b strings.Builder
		for range k {
			fmt.Fprintf(&b, "w%d ", z.Uint64())
		}
		return b.String()
	}
	docs := make([]engine.TextDoc, n)
	for i := range docs {
		docs[i] = engine.TextDoc{ID: uint64(i + 1), Text: text(5 + r.IntN(25)), Context: text(5 + r.IntN(25)), Role: "user", Scope: "s"}
	}
	queries := make([]string, 64)
	for i := range queries {
		queries[i] = text(4 + r.IntN(12))
	}
	return docs, queries
}

// BenchmarkMemory: the tiers' index searched (k=100, as the retrieval
// pipeline asks), and a record moved from one index to another, with and
// without a shared Analysed.
func BenchmarkMemory(b *testing.B) {
	docs, queries := memoryDocs(fts.DefaultAnalysedCapacity)
	// search times searches of a Memory holding docs, the i-th with
	// filter(i), in CPU time per search.
	search := func(b *testing.B, docs []engine.TextDoc, filter func(i int) engine.TextFilter) {
		m, err := fts.NewMemory("")
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Apply(docs, nil, 0); err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		i := 0
		cpu0 := cpuTime()
		for b.Loop() {
			if _, err := m.Search(ctx, queries[i%len(queries)], 100, filter(i)); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(i), "cpu-µs/op")
	}
	b.Run("search", func(b *testing.B) {
		search(b, docs, func(int) engine.TextFilter { return engine.TextFilter{} })
	})
	b.Run("search/scope", func(b *testing.B) {
		// Seven scopes, as LoCoMo's seven conversations share the tiers.
		scoped := slices.Clone(docs)
		for i := range scoped {
			scoped[i].Scope = fmt.Sprintf("conv-%d", i%7)
		}
		search(b, scoped, func(i int) engine.TextFilter { return engine.TextFilter{Scope: fmt.Sprintf("conv-%d", i%7)} })
	})
	// holds asks HoldsAll, as the tier walk asks a tier's index before
	// searching it, in CPU time per question.
	b.Run("holds", func(b *testing.B) {
		m, err := fts.NewMemory("")
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Apply(docs, nil, 0); err != nil {
			b.Fatal(err)
		}
		ctx, all := context.Background(), func(uint64) bool { return true }
		i, held := 0, 0
		cpu0 := cpuTime()
		for b.Loop() {
			ok, err := m.HoldsAll(ctx, queries[i%len(queries)], all)
			if err != nil {
				b.Fatal(err)
			}
			if ok {
				held++
			}
			i++
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(i), "cpu-µs/op")
		b.ReportMetric(float64(held)/float64(i), "held/op")
	})
	for _, shared := range []bool{false, true} {
		b.Run(fmt.Sprintf("move/shared=%v", shared), func(b *testing.B) {
			o := &fts.Options{}
			if shared {
				o.Analysed = fts.NewAnalysed(0)
			}
			var ix [2]*fts.Memory
			for i := range ix {
				var err error
				if ix[i], err = fts.NewMemoryWith(o); err != nil {
					b.Fatal(err)
				}
			}
			if err := ix[0].Apply(docs, nil, 0); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				d := docs[i%len(docs)]
				from, to := ix[(i/len(docs))%2], ix[(i/len(docs)+1)%2]
				if err := from.Apply(nil, []uint64{d.ID}, 0); err != nil {
					b.Fatal(err)
				}
				if err := to.Apply([]engine.TextDoc{d}, nil, 0); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// envStore names the text index of a scale store (bench's BenchmarkScale
// keeps it as DIR/scale2-N/text) for BenchmarkStoreSearch.
const envStore = "HMO_FTS_STORE"

// BenchmarkStoreSearch runs the scale workload's everyday queries
// (synth.Queries(11, 150), as bench's workload) against the text index
// in HMO_FTS_STORE, opened read-only, with the first text search's k
// (100), and reports CPU time and the median per query: with the
// default postings cache; with the default cache in an index opened
// afresh before each pass over the queries (as the scale bench's query
// process asks each once: lists are decoded on first use); and with no
// cache (every search decodes the postings it reads). It is skipped
// without HMO_FTS_STORE.
func BenchmarkStoreSearch(b *testing.B) {
	dir := os.Getenv(envStore)
	if dir == "" {
		b.Skip(envStore + " is not set")
	}
	for _, c := range []struct {
		name  string
		cache int64
		fresh bool
	}{{"cache=default", 0, false}, {"cache=fresh", 0, true}, {"cache=none", -1, false}} {
		b.Run(c.name, func(b *testing.B) {
			open := func() *fts.Index {
				x, err := fts.Open(dir, &fts.Options{ReadOnly: true, SkipVerify: true, PostingsCache: c.cache})
				if err != nil {
					b.Fatal(err)
				}
				return x
			}
			x := open()
			defer func() { x.Close() }()
			queries := synth.Queries(11, 150)
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			var cpu time.Duration
			b.ResetTimer()
			for i := range b.N {
				if c.fresh && i > 0 && i%len(queries) == 0 {
					b.StopTimer()
					x.Close()
					x = open()
					b.StartTimer()
				}
				cpu0, start := cpuTime(), time.Now()
				if _, err := x.Search(ctx, queries[i%len(queries)], 100, engine.TextFilter{}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				cpu += cpuTime() - cpu0
			}
			slices.Sort(lat)
			b.ReportMetric(float64(cpu.Microseconds())/float64(len(lat)), "cpu-us/query")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
		})
	}
}

// BenchmarkMemoryPromote: what a question that reaches the archive does
// to Tier 2's index at 100K (issue 11 item 5): nine records promoted
// into it (the synthetic stream's texts, each with the turn before it
// as its context, as the scale benchmark's store indexes them) and nine
// demoted out of it, in one Apply, into an index of 4,096 such records.
func BenchmarkMemoryPromote(b *testing.B) {
	const held, batch = 4096, 9
	ins := synth.New(synth.Options{Seed: 7, Records: 40000}).Next(40000)
	docs := make([]engine.TextDoc, len(ins))
	for i, in := range ins {
		docs[i] = engine.TextDoc{ID: uint64(i + 1), Text: in.Text, Role: in.Role, Scope: in.Scope, Session: in.Session}
		if i > 0 && ins[i-1].Session == in.Session {
			docs[i].Context = ins[i-1].Text
		}
	}
	m, err := fts.NewMemoryWith(&fts.Options{Analysed: fts.NewAnalysed(0)})
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Apply(docs[:held], nil, 0); err != nil {
		b.Fatal(err)
	}
	next, out := held, 0 // the next record promoted, the next demoted
	cpu0 := cpuTime()
	n := 0
	for b.Loop() {
		add := make([]engine.TextDoc, 0, batch)
		del := make([]uint64, 0, batch)
		for range batch {
			add = append(add, docs[next%len(docs)])
			del = append(del, docs[out%len(docs)].ID)
			next, out = next+1, out+1
		}
		if err := m.Apply(add, del, 0); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(n), "cpu-µs/op")
}
