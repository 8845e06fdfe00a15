package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

// TestRecallMapsNoRecordPages: the records and vectors a flat recall
// reads (the rescored vector candidates, the candidates' records, the
// results, the null sample) are read by pread, not through bbolt's
// mapping, so a querying process does not map the store file page by
// page (with 64 KiB of neighbours each). What stays mapped is the few
// pages every read transaction touches (the meta pages, the bucket
// list).
func TestRecallMapsNoRecordPages(t *testing.T) {
	e, path := openFlatBuilt(t, 3000)
	// Open reads the store through bbolt: start from nothing mapped.
	if err := e.ReleaseMemory(); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		q := engine.Query{Text: fmt.Sprintf("tide station %d heights note %d", i*3, i*70), K: 10}
		if res, err := e.Recall(context.Background(), q); err != nil || len(res) == 0 {
			t.Fatalf("recall %q: %v, %v", q.Text, res, err)
		}
	}
	const most = 256 // KiB: four fault-around windows
	if kb := mappedKB(t, path); kb > most {
		t.Fatalf("30 recalls mapped %d KiB of the store file, want at most %d", kb, most)
	}
}

// TestTieredOpenMapsFewRecordPages: opening a tiered store fills the
// tiers' views from the records and vectors of their members, read by
// pread: the open maps a small part of the store file, not every page
// with its neighbours.
func TestTieredOpenMapsFewRecordPages(t *testing.T) {
	dir := buildStore(t, 3000)
	path, err := filepath.Abs(filepath.Join(dir, engine.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	size, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(dir, testOptions(&fakeClock{t: time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)}))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// Through bbolt the open maps about half of this store's file (1,952
	// of 4,096 KiB when it was written), by pread about an eighth (480).
	if kb, all := mappedKB(t, path), int(size.Size()>>10); kb > all/4 {
		t.Fatalf("opening a tiered store mapped %d of the store file's %d KiB, want at most a quarter", kb, all)
	}
}
