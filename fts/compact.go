package fts

import (
	"context"

	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
)

// Compact merges every segment into one, which drops the documents
// deleted since they were written: until segments merge, a deleted
// document's terms stay in its segment file. It blocks until the merge is
// done; Apply calls wait meanwhile, searches go on.
func (x *Index) Compact(ctx context.Context) error {
	x.applyMu.Lock()
	defer x.applyMu.Unlock()
	if x.closed.Load() {
		return ErrClosed
	}
	opts := mergeplan.SingleSegmentMergePlanOptions
	if err := x.s.ForceMerge(ctx, &opts); err != nil {
		return x.wrap("compact", err)
	}
	return nil
}
