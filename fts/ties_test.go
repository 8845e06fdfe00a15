package fts

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hmo-dev/hmo/engine"
)

// TestTiesByRecordID: documents with equal scores rank by record id,
// lowest first (as sortHits orders them), whatever numbers
// bleve gave them: a search's top k does not depend on the segments'
// layout or on the order in which bleve's analysis finished.
func TestTiesByRecordID(t *testing.T) {
	eachWay(t, testTiesByRecordID)
}

func testTiesByRecordID(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		batches int // the 60 documents are written in this many batches
		k       int
	}{
		{"one batch", 1, 5},
		{"three batches", 3, 5},
		{"twelve batches", 12, 7},
		{"k above the ties", 3, 70},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for trial := range 6 {
				x, err := Open(filepath.Join(t.TempDir(), "text"), nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { x.Close() })
				var docs []engine.TextDoc
				for id := uint64(1); id <= 60; id++ {
					text := "thanks so much"
					if id%10 == 0 {
						text = "a walk by the lake" // not a match
					}
					docs = append(docs, engine.TextDoc{ID: id, Text: text})
				}
				per := len(docs) / tc.batches
				for i := 0; i < len(docs); i += per {
					if err := x.Apply(docs[i:min(i+per, len(docs))], nil, uint64(i+per)); err != nil {
						t.Fatal(err)
					}
				}
				got, err := x.Search(ctx, "thanks", tc.k, engine.TextFilter{})
				if err != nil {
					t.Fatal(err)
				}
				var want []uint64
				for id := uint64(1); id <= 60 && len(want) < tc.k; id++ {
					if id%10 != 0 {
						want = append(want, id)
					}
				}
				ids := make([]uint64, len(got))
				for i, h := range got {
					ids[i] = h.ID
				}
				if fmt.Sprint(ids) != fmt.Sprint(want) {
					t.Fatalf("trial %d: top %d = %v, want %v", trial, tc.k, ids, want)
				}
			}
		})
	}
}
