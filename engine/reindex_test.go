package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/internal/testembed"
)

// flaky embeds like testembed.Hash but fails once calls exceeds failAfter.
type flaky struct {
	testembed.Hash
	failAfter int64
	calls     atomic.Int64
}

func (f *flaky) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.calls.Add(1) > f.failAfter {
		return nil, fmt.Errorf("%w: server went away", engine.ErrModelUnavailable)
	}
	return f.Hash.Embed(ctx, texts)
}

func openFlat(t *testing.T, dir string, emb engine.Embedder) (*engine.Engine, error) {
	t.Helper()
	o := testOptions(&fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)})
	o.Mode = engine.ModeFlat
	if emb != nil {
		o.Embedder = emb
	}
	return engine.Open(dir, o)
}

func TestReindexSwitchesAndResumes(t *testing.T) {
	dir := t.TempDir()
	e, err := openFlat(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ins []engine.Input
	for i := range 150 {
		ins = append(ins, engine.Input{Session: "s", Text: fmt.Sprintf("note %d about the garden and tomatoes %d", i, i*7)})
	}
	ins = append(ins, engine.Input{Session: "s", Text: "my cat is called Miso"})
	remember(t, e, ins...)

	target := testembed.Hash{ID: "test:hash/32", Size: 32}
	// Interrupted after the first batch: the old embedder keeps serving.
	bad := &flaky{Hash: target, failAfter: 1}
	if err := e.Reindex(context.Background(), bad, nil); !errors.Is(err, engine.ErrModelUnavailable) {
		t.Fatalf("Reindex with a failing embedder = %v, want ErrModelUnavailable", err)
	}
	if got := e.Options().Embedder.Name(); got != "test:hash/64" {
		t.Fatalf("embedder after a failed reindex = %q, want the old one", got)
	}
	if ids := recallIDs(t, e, engine.Query{Text: "cat called Miso", K: 3}); len(ids) == 0 {
		t.Fatalf("recall after a failed reindex returned nothing")
	}
	// Records written meanwhile are part of the new index.
	added := remember(t, e, engine.Input{Session: "s", Text: "the boat is moored in Porto"})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	id, err := engine.ReadIdentity(dir, time.Second)
	if err != nil || id.Reindexing != "test:hash/32" {
		t.Fatalf("identity after interruption = %+v, %v; want reindexing test:hash/32", id, err)
	}

	e, err = openFlat(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	resumed := &flaky{Hash: target, failAfter: 1 << 30}
	var last [2]int
	if err := e.Reindex(context.Background(), resumed, func(done, total int) { last = [2]int{done, total} }); err != nil {
		t.Fatalf("resumed Reindex: %v", err)
	}
	if last[0] != last[1] || last[1] != 152 {
		t.Errorf("last progress = %v, want 152/152", last)
	}
	// The first batch (64 records) was kept: the resumed run embedded less.
	if n := resumed.calls.Load(); n > 3 {
		t.Errorf("resumed reindex made %d embed calls, want at most 3 (resume, not restart)", n)
	}
	s, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if s.Embedder != "test:hash/32" || s.Dims != 32 || s.VectorLen != 152 {
		t.Errorf("after reindex: embedder %q, dims %d, vectors %d; want test:hash/32, 32, 152", s.Embedder, s.Dims, s.VectorLen)
	}
	if ids := recallIDs(t, e, engine.Query{Text: "boat moored in Porto", K: 3}); !contains(ids, added[0]) {
		t.Errorf("record added during the reindex not recalled: %v", ids)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// The old embedder is refused with a pointer to reindex; the new one opens.
	if _, err := openFlat(t, dir, nil); !errors.Is(err, engine.ErrEmbedderMismatch) || !strings.Contains(err.Error(), "hmo reindex") {
		t.Fatalf("open with the old embedder = %v, want ErrEmbedderMismatch naming hmo reindex", err)
	}
	e, err = openFlat(t, dir, target)
	if err != nil {
		t.Fatalf("open with the new embedder: %v", err)
	}
	defer e.Close()
	// And back.
	if err := e.Reindex(context.Background(), testembed.Hash{ID: "test:hash/64", Size: 64}, nil); err != nil {
		t.Fatalf("reindex back: %v", err)
	}
	if ids := recallIDs(t, e, engine.Query{Text: "cat called Miso", K: 3}); len(ids) == 0 {
		t.Errorf("recall after reindexing back returned nothing")
	}
}

// TestReindexInTieredMode checks that the tier views follow the switch:
// after reindexing to another dimension, the tier walk serves from the
// new vectors, keeps membership and recall counts, and survives a reopen.
func TestReindexInTieredMode(t *testing.T) {
	dir := t.TempDir()
	e, clock := openTest(t, dir)
	ids := remember(t, e, facts...)
	if got := recallIDs(t, e, engine.Query{Text: "peanut allergy", K: 1}); len(got) != 1 || got[0] != ids[3] {
		t.Fatalf("Recall before reindex = %v, want [%d]", got, ids[3])
	}
	before := e.TierStats()
	target := testembed.Hash{ID: "test:hash/32", Size: 32}
	if err := e.Reindex(context.Background(), target, nil); err != nil {
		t.Fatalf("Reindex in tiered mode: %v", err)
	}
	res, err := e.Recall(context.Background(), engine.Query{Text: "peanut allergy", K: 1})
	if err != nil || len(res) != 1 || res[0].Record.ID != ids[3] || res[0].Tier == engine.TierArchive {
		t.Fatalf("Recall after reindex = %+v, %v; want record %d from a tier", res, err, ids[3])
	}
	after := e.TierStats()
	if after.Tier1+after.Tier2 != before.Tier1+before.Tier2 || after.Queries != before.Queries+1 {
		t.Errorf("tier stats after reindex = %+v, want the same membership and one more query than %+v", after, before)
	}
	if r, _ := e.Get(ids[3]); r.Header.N != 2 {
		t.Errorf("recall count after reindex = %d, want 2", r.Header.N)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	o := testOptions(clock)
	o.Embedder = target
	e, err = engine.Open(dir, o)
	if err != nil {
		t.Fatalf("reopen with the new embedder: %v", err)
	}
	defer e.Close()
	if got := recallIDs(t, e, engine.Query{Text: "peanut allergy", K: 1}); len(got) != 1 || got[0] != ids[3] {
		t.Errorf("Recall after reopen = %v, want [%d]", got, ids[3])
	}
}
