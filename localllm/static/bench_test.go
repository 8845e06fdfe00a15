package static_test

import (
	"context"
	"os"
	"runtime"
	"testing"

	"github.com/hmo-dev/hmo/localllm/static"
)

// BenchmarkStaticEmbed embeds one short sentence.
func BenchmarkStaticEmbed(b *testing.B) {
	s := newStatic(b, nil)
	s.Observe([]string{"I went to a LGBTQ support group yesterday and it was so powerful."})
	texts := []string{"When did Caroline go to the LGBTQ support group?"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStaticNew decodes the committed table and builds an embedder,
// the cost of the first New in a process; heap-B is the heap the
// embedder keeps.
func BenchmarkStaticNew(b *testing.B) {
	packed, err := os.ReadFile("words.bin.zst")
	if err != nil {
		b.Fatal(err)
	}
	opts := &static.Options{Table: packed}
	var keep *static.Static
	var before, after runtime.MemStats
	for b.Loop() {
		keep = nil
		runtime.GC()
		runtime.ReadMemStats(&before)
		if keep, err = static.New(opts); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
	}
	b.ReportMetric(float64(after.HeapAlloc)-float64(before.HeapAlloc), "heap-B")
	runtime.KeepAlive(keep)
}
