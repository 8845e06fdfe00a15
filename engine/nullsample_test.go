package engine_test

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/vecfile"
)

// countingReader is the vector file, counting the rows read by id.
type countingReader struct {
	*vecfile.Index
	reads *atomic.Int64
}

func (c countingReader) NextVector(from uint64) (uint64, []float32, bool, error) {
	c.reads.Add(1)
	return c.Index.NextVector(from)
}

// hiddenReader is the vector file seen as a plain VectorIndex: the
// engine reads every vector from bbolt.
type hiddenReader struct{ engine.FilteredVectorIndex }

// TestNullSampleFromVectorFile checks that the relevance null sample is
// read from the vector file's rows in a flat store (a tiered one reads
// them once an archive search opened the index), and that it is the
// sample bbolt gives: the same calibrated scores as a
// store whose index cannot return its vectors, after forgets, updates
// and more records.
func TestNullSampleFromVectorFile(t *testing.T) {
	for _, mode := range []engine.Mode{engine.ModeFlat, engine.ModeTiered} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			var reads atomic.Int64
			open := func(hide bool) *engine.Engine {
				o := testOptions(&fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
				o.Mode = mode
				o.OpenVectorIndex = func(dir string, dims int) (engine.VectorIndex, error) {
					x, err := vecfile.Open(dir, &vecfile.Options{Dims: dims})
					if err != nil || !hide {
						return countingReader{x, &reads}, err
					}
					return hiddenReader{x}, nil
				}
				e, err := engine.Open(t.TempDir(), o)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { e.Close() })
				return e
			}
			file, bolt := open(false), open(true)
			ctx := context.Background()
			compare := func(label string) {
				t.Helper()
				for _, q := range []string{"topic3 item5", "note about topic7", "item16"} {
					a, err := file.Recall(ctx, engine.Query{Text: q, K: 8})
					if err != nil {
						t.Fatal(err)
					}
					b, err := bolt.Recall(ctx, engine.Query{Text: q, K: 8})
					if err != nil {
						t.Fatal(err)
					}
					if len(a) != len(b) || len(a) == 0 {
						t.Fatalf("%s %q: %d and %d results", label, q, len(a), len(b))
					}
					for i := range a {
						x, y := a[i], b[i]
						if x.Record.ID != y.Record.ID || x.Score != y.Score || !near(x.Relevance, y.Relevance) || !near(x.VectorZ, y.VectorZ) {
							t.Errorf("%s %q #%d: vector file %d score %v relevance %v z %v; bbolt %d %v %v %v", label, q, i,
								x.Record.ID, x.Score, x.Relevance, x.VectorZ, y.Record.ID, y.Score, y.Relevance, y.VectorZ)
						}
					}
				}
			}
			sameHistory(t, []*engine.Engine{file, bolt}, 0, func(label string) {
				before := reads.Load()
				compare(label)
				if mode == engine.ModeFlat && reads.Load() == before {
					t.Fatalf("%s: the flat store's null sample was not read from the vector file", label)
				}
			})
		})
	}
}

// near reports whether a and b agree to 1e-6 of the larger.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*max(math.Abs(a), math.Abs(b), 1) }
