package fts

import (
	"testing"

	"github.com/blevesearch/bleve/v2/index/scorch"

	"github.com/hmo-dev/hmo/engine"
)

// TestTermCountsKeyedByDeletions: a word's counts in a segment are kept
// under the segment's deleted documents, so a delete in the segment asks
// for them anew, and a search made with the table filled before the
// delete scores as one without it (TestPostingsCacheExact checks the
// searches at length, with no decoded list cached).
func TestTermCountsKeyedByDeletions(t *testing.T) {
	x, err := Open(t.TempDir(), &Options{PostingsCache: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	docs := []engine.TextDoc{{ID: 1, Text: "cat sat"}, {ID: 2, Text: "cat ran"}, {ID: 3, Text: "dog"}}
	if err := x.Apply(docs, nil, 1); err != nil {
		t.Fatal(err)
	}
	key := func() termCountKey {
		r, err := x.s.Reader()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		return countKey(r.(*scorch.IndexSnapshot).Segments()[0], "cat")
	}
	before := key()
	x.counts.put(before, [nFields]uint64{7})
	if v, ok := x.counts.get(before); !ok || v[0] != 7 {
		t.Fatalf("get after put: %v, %t", v, ok)
	}
	if err := x.Apply(nil, []uint64{1}, 2); err != nil {
		t.Fatal(err)
	}
	after := key()
	if after == before {
		t.Fatalf("the key did not change with a delete: %+v", after)
	}
	if _, ok := x.counts.get(after); ok {
		t.Fatal("counts kept before the delete served after it")
	}
}
