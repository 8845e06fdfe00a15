package fts_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
	"github.com/hmo-dev/hmo/internal/proctest"
)

// zapResidentKB sums the resident pages of this process's mappings of the
// index's segment files (/proc/self/smaps), in KiB.
func zapResidentKB(t *testing.T, dir string) int {
	t.Helper()
	kb, ok := proctest.ResidentKB(func(p string) bool { return strings.HasPrefix(p, dir) && strings.HasSuffix(p, ".zap") })
	if !ok {
		t.Skip("no /proc/self/smaps")
	}
	return kb
}

// persistedIndex writes an index of the n documents doc returns in a new
// directory, closes it (its segments persisted) and returns the
// directory, an absolute path (as /proc/self/smaps names the files).
func persistedIndex(t *testing.T, n int, doc func(i int) engine.TextDoc) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(t.TempDir(), "text"))
	if err != nil {
		t.Fatal(err)
	}
	x, err := fts.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := make([]engine.TextDoc, n)
	for i := range docs {
		docs[i] = doc(i)
	}
	if err := x.Apply(docs, nil, uint64(n)); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDecodedListsLeaveTheMapping: a search that decodes a long list
// from a persisted segment leaves the list's pages in the page cache but
// not in the process's resident set (the decoded copy is what later
// searches read), and its answers are those of the list.
func TestDecodedListsLeaveTheMapping(t *testing.T) {
	const n = 60000
	dir := persistedIndex(t, n, func(i int) engine.TextDoc {
		return engine.TextDoc{ID: uint64(i + 1), Text: fmt.Sprintf("note%d %s", i, strings.Repeat("walrus ", 1+i%5))}
	})
	x, err := fts.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	before := zapResidentKB(t, dir)
	hits, err := x.Search(context.Background(), "walrus", 10, engine.TextFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 10 {
		t.Fatalf("%d hits, want 10", len(hits))
	}
	after := zapResidentKB(t, dir)
	t.Logf("segment mappings resident: %d KiB at open, %d KiB after the search", before, after)
	// The list is ~60000 frequencies and norms (over 100 KiB); the
	// dictionary's path to it and the fault-around span of its last read
	// are the most that may stay.
	if after-before > 64 {
		t.Errorf("the search left %d KiB of the segments mapped (%d at open, %d after)", after-before, before, after)
	}
}
