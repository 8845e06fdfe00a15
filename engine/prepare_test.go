package engine

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/internal/testembed"
)

// lengthScorer scores I0 from a text's length and counts its calls.
type lengthScorer struct{ calls atomic.Int64 }

func (s *lengthScorer) Importance(text string) float64 {
	s.calls.Add(1)
	return float64(1 + len(text)%10)
}

// TestPreparedBatchesStoreTheSame: RememberBatches prepares each batch's
// inputs (identity keys, importance, entities) while the previous batch
// commits; the store it leaves is, bucket by bucket and byte for byte,
// the store one RememberBatch per batch leaves: inputs with and without
// their own time (the clock's then), named entities and dates, sources,
// duplicates across batches and within one.
func TestPreparedBatchesStoreTheSame(t *testing.T) {
	clock := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	names := []string{"Alice Moreau", "Bob", "Paris", "Acme Corp", "Lisbon"}
	var bs []Batch
	for b := range 7 {
		var batch Batch
		for j := range 25 {
			n := b*25 + j
			in := Input{Scope: []string{"s", "t"}[n%2], Session: fmt.Sprint("session ", n/9), Role: []string{"user", "assistant"}[n%2],
				Text: fmt.Sprintf("%s met %s on March %d, 2023 about topic%d, and again yesterday", names[n%5], names[(n+2)%5], 1+n%28, n%13)}
			if n%3 != 0 { // every third input takes the clock's time
				in.Time = clock.Add(time.Duration(n-400) * time.Hour).In(time.FixedZone("x", 3600))
			}
			if n%4 == 0 {
				in.Sources = []string{fmt.Sprint("src:", n/8)}
			}
			batch.Inputs = append(batch.Inputs, in)
		}
		if b > 0 { // duplicates: of the previous batch, and within this one
			batch.Inputs = append(batch.Inputs, bs[b-1].Inputs[3], batch.Inputs[1])
		}
		bs = append(bs, batch)
	}
	for _, preparing := range []bool{false, true} {
		t.Run(fmt.Sprint("preparing=", preparing), func(t *testing.T) {
			comparePreparedRuns(t, bs, clock, preparing)
		})
	}
}

// comparePreparedRuns stores bs through RememberBatches and through
// RememberBatch and compares the stores; preparing uses an embedder that
// is a TextPreparer.
func comparePreparedRuns(t *testing.T, bs []Batch, clock time.Time, preparing bool) {
	run := func(bulk bool) (map[string][]byte, int64) {
		dir := t.TempDir()
		scorer := &lengthScorer{}
		var emb Embedder = testembed.Hash{ID: "test:hash/16", Size: 16}
		var pe *preparingEmbedder
		if preparing {
			pe = &preparingEmbedder{Hash: testembed.Hash{ID: "test:hash/16", Size: 16}}
			emb = pe
		}
		o := &Options{
			Mode:            ModeFlat,
			Clock:           func() time.Time { return clock },
			Embedder:        emb,
			Importance:      scorer,
			OpenVectorIndex: func(_ string, dims int) (VectorIndex, error) { return newMemVectors(dims), nil },
			OpenTextIndex:   func(string) (TextIndex, error) { return &probeText{}, nil },
		}
		e, err := Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		rememberAndClose(t, e, bs, bulk)
		db, err := bolt.Open(filepath.Join(dir, DBFile), 0o600, &bolt.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		out := map[string][]byte{}
		err = db.View(func(tx *bolt.Tx) error {
			return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
				var buf bytes.Buffer
				var walk func(b *bolt.Bucket) error
				walk = func(b *bolt.Bucket) error {
					fmt.Fprintf(&buf, "seq %d;", b.Sequence())
					return b.ForEach(func(k, v []byte) error {
						buf.Write(k)
						buf.WriteByte(0)
						if v == nil {
							return walk(b.Bucket(k))
						}
						buf.Write(v)
						buf.WriteByte(0)
						return nil
					})
				}
				if err := walk(b); err != nil {
					return err
				}
				out[string(name)] = buf.Bytes()
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if preparing {
			if got := pe.preparedCalls.Load(); bulk != (got > 0) {
				t.Errorf("bulk %t: %d EmbedPrepared calls", bulk, got)
			}
			if len(out[string(bucketMeta)]) == 0 || !bytes.Contains(out[string(bucketMeta)], []byte("observed:")) {
				t.Errorf("bulk %t: the corpus state was not stored", bulk)
			}
		}
		return out, scorer.calls.Load()
	}
	one, _ := run(false)
	bulk, calls := run(true)
	if calls == 0 {
		t.Fatal("the importance scorer was never called")
	}
	var names2 []string
	for name := range one {
		names2 = append(names2, name)
	}
	slices.Sort(names2)
	for _, name := range names2 {
		if !bytes.Equal(one[name], bulk[name]) {
			t.Errorf("bucket %s differs (%d and %d bytes)", name, len(one[name]), len(bulk[name]))
		}
	}
	if len(one) != len(bulk) {
		t.Errorf("%d buckets, want %d", len(bulk), len(one))
	}
	if !strings.Contains(strings.ToLower(string(one[string(bucketEntities)])), "alice") {
		t.Errorf("no entity stored: the test stores none to compare")
	}
}

// preparingEmbedder is a corpus-aware TextPreparer: its vectors are
// Hash's with one more component set by the whole text, so that a text
// assembled from other parts than indexText's embeds differently, and its
// state is every observed text in order.
type preparingEmbedder struct {
	testembed.Hash
	mu            sync.Mutex
	observed      []string
	preparedCalls atomic.Int64
}

type preparedForTest struct{ text string }

func (p *preparingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := p.Hash.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i, t := range texts {
		h := fnv.New32a()
		h.Write([]byte(t))
		v := vs[i]
		v[int(h.Sum32())%len(v)] += 0.5
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(ss))
		}
	}
	return vs, nil
}

func (p *preparingEmbedder) PrepareText(text string) PreparedText { return preparedForTest{text} }

func (p *preparingEmbedder) EmbedPrepared(ctx context.Context, texts [][]PreparedText) ([][]float32, error) {
	p.preparedCalls.Add(1)
	joined := make([]string, len(texts))
	for i, parts := range texts {
		for _, part := range parts {
			joined[i] += part.(preparedForTest).text
		}
	}
	return p.Embed(ctx, joined)
}

func (p *preparingEmbedder) ObservePrepared(texts []PreparedText) {
	var ts []string
	for _, t := range texts {
		ts = append(ts, t.(preparedForTest).text)
	}
	p.Observe(ts)
}

func (p *preparingEmbedder) Observe(texts []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.observed = append(p.observed, texts...)
}

func (p *preparingEmbedder) Forget([]string) {}

func (p *preparingEmbedder) MarshalState() ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return []byte("observed:" + strings.Join(p.observed, "\x00")), nil
}

func (p *preparingEmbedder) UnmarshalState(b []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.observed = strings.Split(strings.TrimPrefix(string(b), "observed:"), "\x00")
	return nil
}

// rememberAndClose stores the batches bs in e, all through RememberBatches
// (bulk) or one RememberBatch each, and closes e.
func rememberAndClose(t *testing.T, e *Engine, bs []Batch, bulk bool) {
	t.Helper()
	if bulk {
		if _, err := e.RememberBatches(context.Background(), slices.Values(bs), nil); err != nil {
			t.Fatal(err)
		}
	} else {
		for _, b := range bs {
			if _, err := e.RememberBatch(context.Background(), b); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}
