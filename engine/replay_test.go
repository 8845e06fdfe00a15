package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/internal/testembed"
)

// probeText is a text index that counts the store's open read
// transactions while it is updated.
type probeText struct {
	wm      uint64
	readers func() int
	most    int // the most readers seen during an update
	updates int
}

func (p *probeText) Apply(_ []TextDoc, _ []uint64, wm uint64) error {
	if p.readers != nil {
		p.most = max(p.most, p.readers())
	}
	p.wm = wm
	p.updates++
	return nil
}

func (p *probeText) Search(context.Context, string, int, TextFilter) ([]TextHit, error) {
	return nil, nil
}
func (p *probeText) Watermark() (uint64, error) { return p.wm, nil }
func (p *probeText) Close() error               { return nil }

// TestIndexUpdateHoldsNoReader: the text index is updated with no bbolt
// read transaction open. An open reader would keep bbolt from reusing the
// pages that the next batch's commit frees while the update runs
// (RememberBatches), and the store file would grow.
func TestIndexUpdateHoldsNoReader(t *testing.T) {
	for _, tt := range []struct {
		name  string
		write func(e *Engine, bs []Batch) error
	}{
		{"Remember", func(e *Engine, bs []Batch) error {
			for _, b := range bs {
				if _, err := e.RememberBatch(context.Background(), b); err != nil {
					return err
				}
			}
			return nil
		}},
		{"RememberBatches", func(e *Engine, bs []Batch) error {
			_, err := e.RememberBatches(context.Background(), slices.Values(bs), nil)
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &probeText{}
			o := &Options{
				Mode:            ModeFlat,
				Embedder:        testembed.Hash{ID: "test:hash/16", Size: 16},
				OpenVectorIndex: func(_ string, dims int) (VectorIndex, error) { return newMemVectors(dims), nil },
				OpenTextIndex:   func(string) (TextIndex, error) { return p, nil },
			}
			e, err := Open(t.TempDir(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			p.readers = func() int { return e.db.Stats().OpenTxN }
			var bs []Batch
			for i := range 4 {
				var b Batch
				for j := range 30 {
					b.Inputs = append(b.Inputs, Input{Scope: "s", Session: fmt.Sprint(i), Role: "user", Text: fmt.Sprintf("note %d of batch %d", j, i)})
				}
				bs = append(bs, b)
			}
			if err := tt.write(e, bs); err != nil {
				t.Fatal(err)
			}
			if p.updates < len(bs) || p.wm != 120 {
				t.Fatalf("%d updates up to %d, want %d up to 120", p.updates, p.wm, len(bs))
			}
			if p.most != 0 {
				t.Errorf("%d read transactions open during an index update, want 0", p.most)
			}
		})
	}
}
