package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/hmo-dev/hmo/internal/testembed"
)

// probeText is a text index that counts the store's open read
// transactions while it is updated. The tier views update theirs from
// several goroutines.
type probeText struct {
	mu      sync.Mutex
	wm      uint64
	readers func() int
	most    int      // the most readers seen during an update
	updates int      // updates since readers was set
	wms     []uint64 // their watermarks
}

func (p *probeText) Apply(_ []TextDoc, _ []uint64, wm uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.readers != nil {
		p.most = max(p.most, p.readers())
		p.updates++
		p.wms = append(p.wms, wm)
	}
	p.wm = wm
	return nil
}

func (p *probeText) Search(context.Context, string, int, TextFilter) ([]TextHit, error) {
	return nil, nil
}
func (p *probeText) Watermark() (uint64, error) { return p.wm, nil }
func (p *probeText) Close() error               { return nil }

// TestIndexUpdateHoldsNoReader: the text index and the tier views'
// lexical indexes are updated with no bbolt read transaction open. An
// open reader would keep bbolt from reusing the pages that the next
// batch's commit frees while the update runs (RememberBatches), and the
// store file would grow. Each batch's archive update covers that batch
// only: the next one's records are not in the tiers yet.
func TestIndexUpdateHoldsNoReader(t *testing.T) {
	writes := []struct {
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
	}
	for _, mode := range []Mode{ModeFlat, ModeTiered} {
		for _, tt := range writes {
			t.Run(fmt.Sprintf("%s/%s", mode, tt.name), func(t *testing.T) {
				archive := &probeText{}
				var tier []*probeText
				o := &Options{
					Mode:            mode,
					Embedder:        testembed.Hash{ID: "test:hash/16", Size: 16},
					OpenVectorIndex: func(_ string, dims int) (VectorIndex, error) { return newMemVectors(dims), nil },
					OpenTextIndex:   func(string) (TextIndex, error) { return archive, nil },
					NewTierTextIndex: func() (TextIndex, error) {
						p := &probeText{}
						tier = append(tier, p)
						return p, nil
					},
				}
				e, err := Open(t.TempDir(), o)
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				readers := func() int { return e.db.Stats().OpenTxN }
				for _, p := range append(tier, archive) {
					p.readers = readers
				}
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
				if want := []uint64{30, 60, 90, 120}; !slices.Equal(archive.wms, want) {
					t.Fatalf("archive updated up to %v, want %v (one update per batch)", archive.wms, want)
				}
				tierUpdates := 0
				for _, p := range append(tier, archive) {
					tierUpdates += p.updates
					if p.most != 0 {
						t.Errorf("%d read transactions open during an index update, want 0", p.most)
					}
				}
				if mode == ModeTiered && tierUpdates == archive.updates {
					t.Errorf("no tier view was updated")
				}
			})
		}
	}
}
