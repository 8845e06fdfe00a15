package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/eval"
	"github.com/hmo-dev/hmo/locomo"
)

// envLoCoMo names the LoCoMo file BenchmarkLoCoMo reads; without it the
// benchmark reads ../../shared/data/locomo-dev.json and is skipped loudly
// when that is missing too.
const envLoCoMo = "HMO_LOCOMO"

// locomoStores are the conversations of the LoCoMo file, each in its own
// store, built once per process and mode.
type locomoStores struct {
	once  sync.Once
	convs []locomo.Conversation
	es    []*engine.Engine
	err   error
}

var locomoBuilt sync.Map // mode -> *locomoStores

// locomoQuestion is one question asked of one store.
type locomoQuestion struct {
	e     *engine.Engine
	scope string
	text  string
}

// BenchmarkLoCoMo measures the query path as hmo eval locomo asks it:
// every conversation of the file in its own store, the default pipeline,
// each non-adversarial question with evidence asked in order (k = 20,
// the conversation's scope), in flat and tiered mode. It reports the
// median and p90 latency per query; -benchtime 1032x asks each question
// of the dev split once. It also reports the process's CPU time per
// query.
func BenchmarkLoCoMo(b *testing.B) {
	file := os.Getenv(envLoCoMo)
	if file == "" {
		file = filepath.Join("..", "..", "shared", "data", "locomo-dev.json")
	}
	if _, err := os.Stat(file); err != nil {
		b.Skipf("SKIPPED LOUDLY: no LoCoMo file (%v); set %s", err, envLoCoMo)
	}
	for _, mode := range []engine.Mode{engine.ModeFlat, engine.ModeTiered} {
		b.Run("mode="+string(mode), func(b *testing.B) {
			s := buildLoCoMo(b, file, mode)
			var qs []locomoQuestion
			for i, c := range s.convs {
				for _, q := range c.QA {
					if q.Category != locomo.Adversarial && len(q.Evidence) > 0 {
						qs = append(qs, locomoQuestion{e: s.es[i], scope: c.ID, text: q.Question})
					}
				}
			}
			if len(qs) == 0 {
				b.Fatal("no questions")
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				q := qs[i%len(qs)]
				t0 := time.Now()
				if _, err := q.e.Recall(context.Background(), engine.Query{Text: q.text, K: 20, Scope: q.scope}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			cpu := cpuTime() - cpu0
			slices.Sort(lat)
			b.ReportMetric(ms(lat[len(lat)/2]), "median-ms")
			b.ReportMetric(ms(lat[len(lat)*9/10]), "p90-ms")
			// The process's CPU time per query: steadier than latency on
			// a shared machine (it includes bleve's background merges).
			b.ReportMetric(ms(cpu)/float64(b.N), "cpu-ms/query")
		})
	}
}

// buildLoCoMo ingests every conversation of file into its own store of
// the given mode, once per process, with the replay clock eval uses.
func buildLoCoMo(b *testing.B, file string, mode engine.Mode) *locomoStores {
	v, _ := locomoBuilt.LoadOrStore(mode, &locomoStores{})
	s := v.(*locomoStores)
	s.once.Do(func() {
		f, err := os.Open(file)
		if err != nil {
			s.err = err
			return
		}
		defer f.Close()
		if s.convs, s.err = locomo.Read(f); s.err != nil {
			return
		}
		for i, c := range s.convs {
			clock := &eval.Clock{}
			e, err := hmo.Open(filepath.Join(workDir, fmt.Sprintf("locomo-%s-%d", mode, i)), &engine.Options{Mode: mode, Clock: clock.Now})
			if err != nil {
				s.err = err
				return
			}
			s.es = append(s.es, e)
			if _, s.err = eval.Ingest(context.Background(), e, c, clock); s.err != nil {
				return
			}
		}
	})
	if s.err != nil {
		b.Fatalf("build LoCoMo stores: %v", s.err)
	}
	return s
}
