package fts

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"
	zap "github.com/blevesearch/zapx/v17"
)

// TestZapReadIsBleve: a word's postings read from a persisted segment's
// file are those bleve's iterator reads, posting for posting (documents,
// frequencies, lengths), for lists of one posting, of several chunks,
// and of no posting; a file read through a reader hook is left to bleve.
func TestZapReadIsBleve(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "text")
	x, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := corpus(3000)
	for i := range docs[:2500] { // a list of several chunks, frequencies 1 to 3
		docs[i].Text += strings.Repeat(" walrus", 1+i%3)
	}
	docs[1234].Text += " zebra"                                  // one document, once
	docs[2345].Context, docs[2346].Role = "okapi okapi", "okapi" // a few, in the other fields
	for i, end := range []int{2500, 2800, 3000} {                // one segment with lists of several chunks
		if err := x.Apply(docs[[]int{0, 2500, 2800}[i]:end], nil, uint64(end)); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Apply(nil, []uint64{5, 6, 7, 2000}, 5000); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened, every segment is read from its file.
	x, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	r, err := x.s.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	terms := distinct(x.terms("the cat sat Paris spring budget café résumé 2024 don't Caroline user assistant walrus zebra okapi unicorn"))
	ctx := context.Background()
	direct, lists, chunked := 0, 0, 0
	for _, seg := range r.(*scorch.IndexSnapshot).Segments() {
		zs, ok := seg.Segment().(*zap.Segment)
		if !ok {
			t.Fatalf("a reopened index's segment is a %T", seg.Segment())
		}
		for _, term := range terms {
			for _, field := range bm25Fields {
				var got, want fieldList
				ok, err := readZapField(ctx, zs, &got, field, term, zs.Count())
				if err != nil {
					t.Fatalf("%s %q: %v", field, term, err)
				}
				if !ok {
					t.Errorf("%s %q: read through bleve", field, term)
					continue
				}
				direct++
				dict, err := zs.Dictionary(field)
				if err != nil {
					t.Fatal(err)
				}
				pl, err := dict.PostingsList([]byte(term), nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := readField(ctx, pl.Iterator(true, true, false, nil), &want, field, term, zs.Count(), pl.Count()); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.docs, want.docs) || !slices.Equal(got.post, want.post) {
					t.Errorf("%s %q: read %d postings %v…, bleve %d %v…", field, term, len(got.docs), got.post[:min(5, len(got.post))], len(want.docs), want.post[:min(5, len(want.post))])
				}
				if len(want.docs) > 0 {
					lists++
				}
				if len(want.docs) > 1024 {
					chunked++
				}
			}
		}
	}
	if direct == 0 || lists < 20 || chunked == 0 {
		t.Fatalf("%d lists read directly, %d not empty, %d of several chunks: the test reads too little", direct, lists, chunked)
	}
	// A reader hook (encrypted files): bleve reads the lists.
	defer func(h func(string, []byte) (func([]byte) ([]byte, error), error)) { index.ReaderHook = h }(index.ReaderHook)
	index.ReaderHook = func(string, []byte) (func([]byte) ([]byte, error), error) { return nil, nil }
	zs := r.(*scorch.IndexSnapshot).Segments()[0].Segment().(*zap.Segment)
	var l fieldList
	if ok, err := readZapField(ctx, zs, &l, bm25Fields[fText], "cat", zs.Count()); ok || err != nil || len(l.docs) != 0 {
		t.Errorf("with a reader hook: read %t (%v), %d postings; want bleve to read them", ok, err, len(l.docs))
	}
}

// TestZapLengthMemo: a norm's length read through the memo is the one
// worked out from the bits, at the first read and at later ones, for
// bits inside the memo and past it; a length past a uint32 is
// ErrCorrupt.
func TestZapLengthMemo(t *testing.T) {
	var m zapLengthMemo
	for _, bits := range []uint64{0, 1, 2, 7, 100, 4095, 4096, 1 << 20, 1<<32 - 2, 1<<32 - 1} {
		want := normLength(zapNorm(bits))
		for range 2 {
			got, err := m.length(bits)
			switch {
			case want > math.MaxUint32:
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("length(%d) = %d, %v; want ErrCorrupt", bits, got, err)
				}
			case err != nil || float64(got) != want:
				t.Errorf("length(%d) = %d, %v; want %v", bits, got, err, want)
			}
		}
	}
}
