package engine

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
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
	run := func(bulk bool) (map[string][]byte, int64) {
		dir := t.TempDir()
		scorer := &lengthScorer{}
		o := &Options{
			Mode:            ModeFlat,
			Clock:           func() time.Time { return clock },
			Embedder:        testembed.Hash{ID: "test:hash/16", Size: 16},
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
