package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
)

// buildStore makes a closed tiered store of n records in a new directory.
func buildStore(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	clock := &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	e := openAt(t, dir, clock)
	var ins []engine.Input
	for i := range n {
		ins = append(ins, engine.Input{Session: fmt.Sprintf("s%d", i/50), Role: "user",
			Text: fmt.Sprintf("record %d: the tide station %d reports heights in feet, note %d", i, i%97, i*7)})
	}
	if _, err := e.Remember(context.Background(), ins...); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// useStore opens dir and runs what the CLI's read and write commands
// run, returning the first error. A panic fails the test (it is what
// issue 14 finding 2 saw).
func useStore(t *testing.T, dir string, o *engine.Options) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v", r)
		}
	}()
	e, err := engine.Open(dir, o)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, e.Close()) }()
	if _, err := e.Stats(); err != nil {
		return err
	}
	if _, err := e.Recall(context.Background(), engine.Query{Text: "tide station heights"}); err != nil {
		return err
	}
	if err := e.Scan(func(*engine.Record) error { return nil }); err != nil {
		return err
	}
	_, err = e.Remember(context.Background(), engine.Input{Text: "one more note"})
	return err
}

// TestDamagedStoreNoPanic is finding 2 of issue 14: 64 bytes flipped mid
// file, or the file cut to half, made stats, export, add and recall
// panic (bbolt's "assertion failed: Page expected to be ..."). Every
// damage now gives an error naming the store and what to do, or works.
func TestDamagedStoreNoPanic(t *testing.T) {
	base := buildStore(t, 1500)
	db, err := os.ReadFile(filepath.Join(base, engine.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	damages := []struct {
		name string
		data func() []byte
	}{
		{"truncated to half", func() []byte { return db[:len(db)/2] }},
		{"truncated to a quarter", func() []byte { return db[:len(db)/4] }},
	}
	for _, at := range []float64{0.3, 0.5, 0.7, 0.9} {
		damages = append(damages, struct {
			name string
			data func() []byte
		}{fmt.Sprintf("64 bytes flipped at %.0f%%", at*100), func() []byte {
			b := append([]byte(nil), db...)
			off := int(float64(len(b))*at) &^ 4095 // a page start: its header
			for i := off; i < off+64 && i < len(b); i++ {
				b[i] ^= 0xff
			}
			return b
		}})
	}
	damaged := 0
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, engine.DBFile), d.data(), 0o600); err != nil {
				t.Fatal(err)
			}
			err := useStore(t, dir, testOptions(&fakeClock{t: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)}))
			t.Logf("%s: %v", d.name, err)
			if err != nil && errors.Is(err, engine.ErrDamaged) {
				damaged++
				if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "salvage") {
					t.Errorf("error does not name the store and what to do: %v", err)
				}
			}
			// Salvage copies what can be read, and never panics.
			dst, err := engine.Open(t.TempDir(), testOptions(&fakeClock{t: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)}))
			if err != nil {
				t.Fatal(err)
			}
			defer dst.Close()
			rep, err := engine.Salvage(context.Background(), dir, dst, nil)
			t.Logf("salvage: %+v, %v", rep, err)
		})
	}
	if damaged == 0 {
		t.Error("no damage was reported as ErrDamaged")
	}
}

// TestSalvageCopiesReadable: a store whose file lost its tail still
// gives up every record on the pages that survive.
func TestSalvageCopiesReadable(t *testing.T) {
	base := buildStore(t, 1500)
	dst, err := engine.Open(t.TempDir(), testOptions(&fakeClock{t: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)}))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	rep, err := engine.Salvage(context.Background(), base, dst, nil)
	if err != nil || rep.Copied != 1500 || rep.Unreadable != 0 {
		t.Fatalf("salvage of an intact store: %+v, %v; want all 1500 copied", rep, err)
	}
	res, err := dst.Recall(context.Background(), engine.Query{Text: "record 1234"})
	if err != nil || len(res) == 0 || !strings.Contains(res[0].Record.Text, "record 1234:") {
		t.Fatalf("recall in the salvaged store: %v, %v", res, err)
	}
}

// TestStoreFileMissingOrEmpty: a zero-length hmo.db said "bad file
// descriptor"; a deleted one made add silently start a new store.
func TestStoreFileMissingOrEmpty(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, engine.DBFile), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := engine.Open(dir, testOptions(&fakeClock{}))
		if !errors.Is(err, engine.ErrDamaged) || !strings.Contains(err.Error(), "empty") {
			t.Fatalf("got %v, want ErrDamaged saying the file is empty", err)
		}
		if _, err := engine.ReadIdentity(dir, time.Second); !errors.Is(err, engine.ErrDamaged) {
			t.Fatalf("ReadIdentity: got %v, want ErrDamaged", err)
		}
		if fi, _ := os.Stat(filepath.Join(dir, engine.DBFile)); fi.Size() != 0 {
			t.Fatal("the empty file was written to")
		}
	})
	t.Run("deleted", func(t *testing.T) {
		dir := buildStore(t, 10)
		if err := os.Remove(filepath.Join(dir, engine.DBFile)); err != nil {
			t.Fatal(err)
		}
		for _, c := range []engine.CreatePolicy{engine.CreateIfNew, engine.CreateNever} {
			o := testOptions(&fakeClock{})
			o.Create = c
			if _, err := engine.Open(dir, o); !errors.Is(err, engine.ErrNoStore) {
				t.Fatalf("policy %d: got %v, want ErrNoStore", c, err)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, engine.DBFile)); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("a store file was created")
		}
		// A directory that does not exist yet, or holds no index, is new:
		// CreateIfNew makes a store there.
		o := testOptions(&fakeClock{})
		o.Create = engine.CreateIfNew
		for _, d := range []string{filepath.Join(t.TempDir(), "new"), t.TempDir()} {
			os.WriteFile(filepath.Join(d, "serve.log"), nil, 0o600)
			e, err := engine.Open(d, o)
			if err != nil {
				t.Fatalf("new directory: %v", err)
			}
			e.Close()
		}
	})
}

// TestRebuildsAreNoted is finding 11: an index rebuilt on open was only
// visible in Bleve's log. The engine notes each rebuild with its reason.
func TestRebuildsAreNoted(t *testing.T) {
	dir := buildStore(t, 100)
	e := openAt(t, dir, &fakeClock{t: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)})
	if r, err := e.Rebuilds(); err != nil || len(r) != 0 {
		t.Fatalf("intact store: rebuilds %v, %v; want none", r, err)
	}
	e.Close()
	if err := os.RemoveAll(filepath.Join(dir, engine.TextDir)); err != nil {
		t.Fatal(err)
	}
	e = openAt(t, dir, &fakeClock{t: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)})
	res, err := e.Recall(context.Background(), engine.Query{Text: "record 42"})
	if err != nil || len(res) == 0 {
		t.Fatalf("recall after rebuild: %v %v", res, err)
	}
	e.Close()
	rep, err := engine.Check(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rebuilds) != 1 || rep.Rebuilds[0].Index != "text" || rep.Rebuilds[0].Reason == "" {
		t.Fatalf("rebuilds %+v, want one text rebuild with a reason", rep.Rebuilds)
	}
	if len(rep.Problems) != 0 || rep.Records != 100 {
		t.Fatalf("check: %+v", rep)
	}
}

// TestReadOnlyOpen is finding 3's read side: a read-only open writes
// nothing (no file changes), answers, and refuses writes.
func TestReadOnlyOpen(t *testing.T) {
	dir := buildStore(t, 100)
	before := snapshot(t, dir)
	o := testOptions(&fakeClock{t: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)})
	o.ReadOnly = true
	o.OpenTextIndex = func(dir string) (engine.TextIndex, error) { return fts.Open(dir, &fts.Options{ReadOnly: true}) }
	e, err := engine.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Recall(context.Background(), engine.Query{Text: "record 42"})
	if err != nil || len(res) == 0 {
		t.Fatalf("recall: %v %v", res, err)
	}
	if _, err := e.Remember(context.Background(), engine.Input{Text: "x"}); !errors.Is(err, engine.ErrReadOnly) {
		t.Fatalf("write to a read-only store: %v, want ErrReadOnly", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("a read-only open changed the store's files:\nbefore %s\nafter  %s", before, after)
	}
	o.ReadOnly, o.Create = true, engine.CreateAlways
	if _, err := engine.Open(filepath.Join(t.TempDir(), "none"), o); !errors.Is(err, engine.ErrNoStore) {
		t.Fatalf("read-only open of no store: %v, want ErrNoStore", err)
	}
}

// snapshot describes the files of dir: names, sizes, modification times.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			fmt.Fprintf(&b, "%s:%d:%d ", strings.TrimPrefix(p, dir), fi.Size(), fi.ModTime().UnixNano())
		}
		return nil
	})
	return b.String()
}

// TestUntrustedDirRefused is finding 4 at the engine: a store directory
// other users can write is refused, so a client falling back to opening
// the store directly does not write into it either.
func TestUntrustedDirRefused(t *testing.T) {
	dir := buildStore(t, 3)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Open(dir, testOptions(&fakeClock{})); !errors.Is(err, engine.ErrUntrusted) || !strings.Contains(err.Error(), "chmod 700") {
		t.Fatalf("open of a 0777 store dir: %v, want ErrUntrusted saying what to do", err)
	}
	os.Chmod(dir, 0o700)
	e, err := engine.Open(dir, testOptions(&fakeClock{}))
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
}

// TestCheckTruncatedStore: bbolt's page check runs in a goroutine of its
// own, so a page past the end of a truncated file crashed hmo doctor with
// SIGBUS (seen in TestDamageMatrix, cmd/hmo, depending on the layout).
// Check reports the truncation instead.
func TestCheckTruncatedStore(t *testing.T) {
	base := buildStore(t, 1500)
	db, err := os.ReadFile(filepath.Join(base, engine.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []int{len(db) / 2, len(db) / 4} {
		t.Run(fmt.Sprint(keep), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, engine.DBFile), db[:keep], 0o600); err != nil {
				t.Fatal(err)
			}
			rep, err := engine.Check(dir, nil)
			if err != nil {
				t.Logf("check: %v", err)
				if !errors.Is(err, engine.ErrDamaged) {
					t.Errorf("check of a truncated store: %v, want ErrDamaged or a report", err)
				}
				return
			}
			if !strings.Contains(strings.Join(rep.Problems, "\n"), "truncated") {
				t.Errorf("the report does not name the truncation: %q", rep.Problems)
			}
		})
	}
}
