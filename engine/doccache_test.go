package engine

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/hmo-dev/hmo/internal/testembed"
	"github.com/hmo-dev/hmo/retrieve"
)

// TestPoolDocsFillDocCache: reading the feedback pool's records (the
// first pass's lexical candidates) fills the pipeline's doc cache, so
// that the priors that read those candidates next find them there; a
// forgotten record is neither returned nor cached, and the cached docs
// are what the priors would read from the store. Read again, from the
// cache, the pool's documents are the ones read from the store (own
// text, context turns stepping over a derived record, role, labels).
// The pool's records are read in two halves from parallelTextDocs ids
// on: both sizes are checked, with a forgotten record in each half.
func TestPoolDocsFillDocCache(t *testing.T) {
	for _, n := range []int{6, 3 * parallelTextDocs} {
		t.Run(fmt.Sprint(n, " records"), func(t *testing.T) { testPoolDocs(t, n) })
	}
}

// openDocsEngine opens a flat store of test doubles indexing two turns
// of context, closed when the test ends.
func openDocsEngine(t *testing.T) *Engine {
	t.Helper()
	o := &Options{
		Mode:            ModeFlat,
		IndexContext:    2,
		Embedder:        testembed.Hash{ID: "test:hash/16", Size: 16},
		OpenVectorIndex: func(_ string, dims int) (VectorIndex, error) { return newMemVectors(dims), nil },
		OpenTextIndex:   func(string) (TextIndex, error) { return &mapText{docs: map[uint64]TextDoc{}}, nil },
	}
	e, err := Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func testPoolDocs(t *testing.T, n int) {
	e := openDocsEngine(t)
	var in []Input
	for i := range n {
		role := []string{"user", "assistant", "fact"}[i%3]
		in = append(in, Input{Scope: "s", Session: "1", Role: role, Text: fmt.Sprintf("note %d about the lake on Monday?", i)})
	}
	ids, err := e.Remember(context.Background(), in...)
	if err != nil {
		t.Fatal(err)
	}
	gone := map[uint64]bool{ids[n-1]: true, ids[1]: true}
	for id := range gone {
		if err := e.Forget(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	e.docCache.drop(ids...)
	docs, err := e.textDocs(ids)
	if err != nil {
		t.Fatal(err)
	}
	e.docCache.drop(ids...)
	one, err := e.readTextDocs(ids) // one transaction, in order
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(one, docs) {
		t.Errorf("pool docs in one transaction:\n%+v\nin halves:\n%+v", one, docs)
	}
	again, err := e.textDocs(ids)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, docs) {
		t.Errorf("pool docs from the cache:\n%+v\nfrom the store:\n%+v", again, docs)
	}
	if docs[3].Context == "" || docs[3].Role != "assistant" {
		t.Errorf("record 5's document %+v: want its context turns and role", docs[3])
	}
	if len(docs) != n-len(gone) {
		t.Fatalf("%d pool docs, want %d (%d forgotten)", len(docs), n-len(gone), len(gone))
	}
	for id := range gone {
		if _, ok := e.docCache.get(id); ok {
			t.Error("a forgotten record was cached")
		}
	}
	for _, id := range ids {
		if gone[id] {
			continue
		}
		got, ok := e.docCache.get(id)
		if !ok {
			t.Fatalf("record %d not cached by the pool's read", id)
		}
		e.docCache.drop(id)
		want, err := e.docs([]uint64{id})
		if err != nil {
			t.Fatal(err)
		}
		w := want[0]
		if got.ID != w.ID || got.Prev != w.Prev || got.Text != w.Text || got.Session != w.Session || got.Speaker != w.Speaker ||
			!got.Time.Equal(w.Time) || got.Context != w.Context || got.Derived != w.Derived {
			t.Errorf("record %d: cached %+v, read %+v", id, got, w)
		}
	}
}

// TestDocCacheGeneration: a record read in a transaction that began
// before a Forget's commit is not cached once the Forget dropped it, so
// a forgotten record's text cannot come back and steer later queries;
// reads after the last drop are cached as before.
func TestDocCacheGeneration(t *testing.T) {
	for _, tc := range []struct {
		name   string
		drops  []uint64 // dropped between the reader's generation and its put
		id     uint64
		cached bool
	}{
		{"no drop since the read", nil, 7, true},
		{"the record dropped since", []uint64{7}, 7, false},
		{"another record dropped since", []uint64{9}, 7, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c docCache
			gen := c.generation()
			if tc.drops != nil {
				c.drop(tc.drops...)
			}
			c.put(retrieve.Doc{ID: tc.id, Text: "the old text"}, gen)
			if _, ok := c.get(tc.id); ok != tc.cached {
				t.Fatalf("cached %t, want %t", ok, tc.cached)
			}
			gen = c.generation()
			c.put(retrieve.Doc{ID: tc.id, Text: "read after the drop"}, gen)
			if d, ok := c.get(tc.id); !ok || d.Text != "read after the drop" {
				t.Fatalf("a read after the last drop: %+v, %t", d, ok)
			}
		})
	}
}

// postingsPoolText is a text index that scores a pool from what it holds
// (the pool's ids, ranked in the order given) and never reads the pool's
// documents, as fts does when it still knows where it found them; or,
// with docs set, reads them as an index that counts them does.
type postingsPoolText struct {
	mapText
	docs  bool
	asked int // pooled searches that read the documents
	wrong int // pool documents not as they were indexed
}

func (x *postingsPoolText) SearchPool(_ context.Context, _ string, k int, _ TextFilter, p TextPool) ([]TextHit, error) {
	ids := p.IDs
	if x.docs {
		x.asked++
		docs, err := p.Docs()
		if err != nil {
			return nil, err
		}
		ids = ids[:0:0]
		x.mu.Lock()
		for _, d := range docs {
			ids = append(ids, d.ID)
			if d != x.mapText.docs[d.ID] {
				x.wrong++
			}
		}
		x.mu.Unlock()
	}
	var hits []TextHit
	for i, id := range ids[:min(k, len(ids))] {
		hits = append(hits, TextHit{ID: id, Score: float64(len(ids) - i)})
	}
	return hits, nil
}

// TestPoolDocsReadBesideTheSearch: the feedback search's pool (the first
// pass's lexical candidates, whose docs the priors read next) is read
// into the doc cache while the pooled search runs, whether or not the
// index reads the pool's documents; one that does gets the documents it
// indexed, at the first pooled search (read when asked for) and the
// next ones (read ahead, as the last pool was counted).
func TestPoolDocsReadBesideTheSearch(t *testing.T) {
	for _, readsDocs := range []bool{false, true} {
		t.Run(fmt.Sprint("index reads the docs: ", readsDocs), func(t *testing.T) {
			x := &postingsPoolText{mapText: mapText{docs: map[uint64]TextDoc{}}, docs: readsDocs}
			o := &Options{
				Mode:            ModeFlat,
				Embedder:        testembed.Hash{ID: "test:hash/16", Size: 16},
				OpenVectorIndex: func(_ string, dims int) (VectorIndex, error) { return newMemVectors(dims), nil },
				OpenTextIndex:   func(string) (TextIndex, error) { return x, nil },
			}
			e, err := Open(t.TempDir(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			var in []Input
			for i := range 40 {
				in = append(in, Input{Scope: "s", Session: "1", Role: "user", Text: fmt.Sprintf("note %d about the lake", i)})
			}
			ids, err := e.Remember(context.Background(), in...)
			if err != nil {
				t.Fatal(err)
			}
			for round := range 3 {
				e.docCache.drop(ids...)
				pool := ids[5+round : 30]
				q := &Query{Text: "lake", K: 10}
				src := &archiveSource{e: e, q: q}
				x.asked = 0
				hits, err := src.Text(context.Background(), &retrieve.Query{Text: "lake note", TextPool: pool, TextPostings: 1}, 10)
				if err != nil {
					t.Fatal(err)
				}
				if len(hits) != 10 || hits[0].ID != pool[0] {
					t.Fatalf("round %d: pooled hits %v, want the pool's first 10", round, hits)
				}
				if readsDocs != (x.asked == 1) || x.wrong != 0 {
					t.Fatalf("round %d: the index read the pool's documents %d times, %d not as indexed", round, x.asked, x.wrong)
				}
				for _, id := range pool {
					if _, ok := e.docCache.get(id); !ok {
						t.Errorf("round %d: pool record %d not in the doc cache after the pooled search", round, id)
					}
				}
				for _, id := range append(ids[:5+round:5+round], ids[30:]...) {
					if _, ok := e.docCache.get(id); ok {
						t.Errorf("round %d: record %d, not in the pool, was read", round, id)
					}
				}
			}
		})
	}
}

// TestWarmDocsFillDocCache: the read ahead (archiveSource.Prefetch, and
// the feedback pool's read when its documents are not asked for) caches
// the records it is given that the cache lacks, as docs would read them,
// a forgotten record not at all; the docs a caller got before keep their
// values after the cache starts over in place.
func TestWarmDocsFillDocCache(t *testing.T) {
	e := openDocsEngine(t)
	var in []Input
	for i := range 4 * parallelPrefetch {
		in = append(in, Input{Scope: "s", Session: fmt.Sprint(i % 3), Role: []string{"user", "assistant"}[i%2], Text: fmt.Sprintf("note %d about the lake on Monday?", i)})
	}
	ids, err := e.Remember(context.Background(), in...)
	if err != nil {
		t.Fatal(err)
	}
	// From parallelPrefetch ids on, Prefetch reads on two goroutines:
	// both sizes, a forgotten record early and late in the ids.
	forgotten := map[int]bool{}
	for _, n := range []int{20, 3 * parallelPrefetch} {
		for _, i := range []int{5, n - 3} {
			if !forgotten[i] {
				if err := e.Forget(context.Background(), ids[i]); err != nil {
					t.Fatal(err)
				}
				forgotten[i] = true
			}
		}
		e.docCache.drop(ids...)
		src := &archiveSource{e: e}
		src.Prefetch(ids[:n])
		for i, id := range ids[:n] {
			d, ok := e.docCache.get(id)
			if forgotten[i] {
				if ok {
					t.Fatal("a forgotten record was cached by the read ahead")
				}
				continue
			}
			if !ok {
				t.Fatalf("record %d not cached by the read ahead of %d", id, n)
			}
			e.docCache.drop(id)
			want, err := e.docs([]uint64{id})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d.Text, want[0].Text) || d.ID != want[0].ID || d.Session != want[0].Session || d.Speaker != want[0].Speaker || d.Prev != want[0].Prev {
				t.Fatalf("record %d: read ahead %+v, read %+v", id, d, want[0])
			}
		}
		if _, ok := e.docCache.get(ids[n+5]); ok {
			t.Fatal("a record not read ahead is cached")
		}
	}
	// The cache starts over when full, in the same map: a doc handed out
	// before keeps its value, the old entries are gone, the new ones held.
	kept, err := e.docs(ids[30:32])
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(kept)
	gen := e.docCache.generation()
	for i := range docCacheCap + 10 {
		e.docCache.put(retrieve.Doc{ID: uint64(1_000_000 + i), Text: fmt.Sprint("filler ", i)}, gen)
	}
	if _, ok := e.docCache.get(ids[30]); ok {
		t.Fatal("the cache did not start over when full")
	}
	if d, ok := e.docCache.get(1_000_000 + docCacheCap + 9); !ok || d.Text != fmt.Sprint("filler ", docCacheCap+9) {
		t.Fatalf("the last put after starting over: %+v %t", d, ok)
	}
	for i := range kept {
		if kept[i].ID != want[i].ID || kept[i].Text != want[i].Text || kept[i].Session != want[i].Session {
			t.Fatalf("a doc handed out changed when the cache started over: %+v, was %+v", kept[i], want[i])
		}
	}
}
