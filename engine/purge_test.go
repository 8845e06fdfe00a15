package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hmo-dev/hmo/engine"
)

// filesHolding lists the files under dir that contain b.
func filesHolding(t *testing.T, dir string, b []byte) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(raw, b) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// bucketHolds reports whether bucket name of the closed store in dir
// holds b in a key or a value.
func bucketHolds(t *testing.T, dir, name string, b []byte) bool {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, engine.DBFile), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	found := false
	db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte(name))
		if bk == nil {
			return nil
		}
		return bk.ForEach(func(k, v []byte) error {
			found = found || bytes.Contains(k, b) || bytes.Contains(v, b)
			return nil
		})
	})
	return found
}

// TestPurgeLeavesNoBytes checks "delete means gone" at the file level: a
// forgotten record's text is in the store's files after Forget (freed
// bbolt pages, deleted documents in Bleve segments), and in none of them
// after CompactIndexes and CompactStore; the other records are intact.
func TestPurgeLeavesNoBytes(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	e := openAt(t, dir, clock)
	secret := []byte("zebraquokka")
	var ins []engine.Input
	for i := range 200 {
		ins = append(ins, engine.Input{Session: "s", Text: fmt.Sprintf("an ordinary note about the garden %c %d", 'a'+i%26, i)})
	}
	// The capitalised name also makes the secret an entity of the graph;
	// three turns on it make an event unit whose summary holds it.
	ins = append(ins, engine.Input{Session: "s", Text: "my bank pin is zebraquokka, never tell Zebraquokka"},
		engine.Input{Session: "s", Text: "the zebraquokka pin opens the bank safe too"},
		engine.Input{Session: "s", Text: "zebraquokka, zebraquokka: the bank pin again"})
	ids := remember(t, e, ins...)
	secrets := ids[len(ids)-3:]
	// Save the indexes with the secret in them, as a long-running store would.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// Each structure keeps the secret: the entity graph as an entity,
	// xMemory as a fact and a theme's summary, HyMem as an event unit's
	// Level-1 summary.
	for _, b := range []string{"entities", "xmemory", "hymem"} {
		if !bucketHolds(t, dir, b, secret) {
			t.Fatalf("precondition: bucket %s does not hold the secret; the test would not cover it", b)
		}
	}
	e = openAt(t, dir, clock)
	if seg, _, sum, err := e.Episode(secrets[2]); err != nil || seg == 0 || !bytes.Contains([]byte(sum), secret) {
		t.Fatalf("precondition: the secret's event unit %d has summary %q (%v), want the secret in it", seg, sum, err)
	}
	if err := e.Forget(context.Background(), secrets...); err != nil {
		t.Fatal(err)
	}
	if th, _, _ := e.Themes("", secrets); slices.ContainsFunc(th, func(id uint64) bool { return id != 0 }) {
		t.Errorf("the forgotten records keep themes %v", th)
	}
	if sums, err := e.SegmentSummaries(); err != nil {
		t.Fatal(err)
	} else {
		for id, s := range sums {
			if bytes.Contains([]byte(s), secret) {
				t.Errorf("segment %d's summary keeps the forgotten text: %q", id, s)
			}
		}
	}
	if units, err := e.EventUnits(); err != nil {
		t.Fatal(err)
	} else {
		for id, u := range units {
			if bytes.Contains([]byte(u.Summary), secret) {
				t.Errorf("event unit %d's summary keeps the forgotten text: %q", id, u.Summary)
			}
		}
	}
	if themes, err := e.ThemeSummaries(""); err != nil {
		t.Fatal(err)
	} else {
		for id, th := range themes {
			if bytes.Contains([]byte(th.Summary), secret) {
				t.Errorf("theme %d's summary keeps the forgotten text: %q", id, th.Summary)
			}
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if got := filesHolding(t, dir, secret); len(got) == 0 {
		t.Fatalf("precondition: no file holds the forgotten text before the purge; the test would prove nothing")
	} else {
		t.Logf("before the purge the forgotten text is in %d file(s)", len(got))
	}
	for _, b := range []string{"entities", "xmemory", "hymem"} {
		if bucketHolds(t, dir, b, secret) {
			t.Errorf("bucket %s still holds the forgotten text after Forget", b)
		}
	}
	e = openAt(t, dir, clock)
	if err := e.CompactIndexes(context.Background()); err != nil {
		t.Fatalf("CompactIndexes: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := engine.CompactStore(dir, time.Second); err != nil {
		t.Fatalf("CompactStore: %v", err)
	}
	if got := filesHolding(t, dir, secret); len(got) != 0 {
		t.Errorf("after the purge the forgotten text is still in %v", got)
		db, _ := bolt.Open(filepath.Join(dir, engine.DBFile), 0o600, nil)
		db.View(func(tx *bolt.Tx) error {
			return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
				return b.ForEach(func(k, v []byte) error {
					if bytes.Contains(k, secret) || bytes.Contains(v, secret) {
						t.Logf("bucket %s key %q", name, k)
					}
					return nil
				})
			})
		})
		db.Close()
	}
	e = openAt(t, dir, clock)
	defer e.Close()
	if s, _ := e.Stats(); s.Records != 200 {
		t.Errorf("records after the purge = %d, want 200", s.Records)
	}
	if got := recallIDs(t, e, engine.Query{Text: "garden note", K: 3}); len(got) != 3 {
		t.Errorf("recall after the purge = %v, want 3 results", got)
	}
}

func TestCompactStoreRefusesOpenStore(t *testing.T) {
	dir := t.TempDir()
	openTest(t, dir)
	if err := engine.CompactStore(dir, 50*time.Millisecond); err == nil || !errors.Is(err, engine.ErrLocked) {
		t.Errorf("CompactStore on an open store = %v, want ErrLocked", err)
	}
}

// TestOpenFollowsAReplacedFile checks that a process waiting for the
// store's lock while the file is compacted and replaced opens the new
// file, not the old one that lost its name: writes to that one would be
// lost.
func TestOpenFollowsAReplacedFile(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	e := openAt(t, dir, clock)
	remember(t, e, facts...)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, engine.DBFile)
	// Play the compactor by hand: hold the lock, copy, rename over.
	src, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan *engine.Engine, 1)
	go func() {
		o := testOptions(clock)
		o.OpenTimeout = 10 * time.Second
		w, err := engine.Open(dir, o)
		if err != nil {
			t.Errorf("waiting Open: %v", err)
		}
		opened <- w
	}()
	time.Sleep(200 * time.Millisecond) // the goroutine now waits for the lock
	dst, err := bolt.Open(path+".new", 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bolt.Compact(dst, src, 1<<20); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	src.Close()
	w := <-opened
	if w == nil {
		return
	}
	id := remember(t, w, engine.Input{Text: "written after the compaction"})[0]
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	e = openAt(t, dir, clock)
	defer e.Close()
	if _, err := e.Get(id); err != nil {
		t.Errorf("the write made after the file was replaced is lost: Get(%d) = %v", id, err)
	}
}
