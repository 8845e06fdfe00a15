package fts_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
)

// storedIndexAt reads the footer of the segment file at path: where its
// stored index starts, and its documents. The footer ends with
// numDocs, storedIndexOffset, sectionsIndexOffset (8 bytes each), the
// chunk mode, version and crc (4 each).
func storedIndexAt(t *testing.T, path string) (storedIndex, numDocs uint64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	foot := len(b) - 12 - 8
	return binary.BigEndian.Uint64(b[foot-8:]), binary.BigEndian.Uint64(b[foot-16:])
}

// storedPagesMapped counts the pages of the stored sections of the
// index's segment files (from the file's start to the end of its stored
// index, less the 64 KiB before that end, which a read of the sections
// after it may map by fault-around) that are mapped in this process
// (/proc/self/maps, /proc/self/pagemap).
func storedPagesMapped(t *testing.T, dir string) (mapped, pages int) {
	t.Helper()
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	defer maps.Close()
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skipf("no pagemap: %v", err)
	}
	defer pm.Close()
	page := uint64(os.Getpagesize())
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || !strings.HasPrefix(f[5], dir) || !strings.HasSuffix(f[5], ".zap") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil || off != 0 {
			t.Fatalf("mapping %q", sc.Text())
		}
		storedIndex, numDocs := storedIndexAt(t, f[5])
		stored := min(storedIndex+8*numDocs, end-start)
		if stored <= 64<<10 {
			t.Fatalf("stored section of %s is %d bytes: too short to tell", f[5], stored)
		}
		n := (stored - 64<<10) / page
		buf := make([]byte, 8*n)
		if _, err := pm.ReadAt(buf, int64(start/page*8)); err != nil {
			t.Skipf("pagemap: %v", err)
		}
		for i := 0; i < len(buf); i += 8 {
			if binary.LittleEndian.Uint64(buf[i:])&(1<<63) != 0 {
				mapped++
			}
		}
		pages += int(n)
	}
	if pages == 0 {
		t.Fatalf("no segment of %s is mapped", dir)
	}
	return mapped, pages
}

// dropCached drops the segment files of dir from the page cache. Just
// written, a file's cache may be in large folios, and a fault on a
// mapping of it maps the whole folio (up to 2 MiB on Linux 6.18): any
// read of the mapping near the stored section would map all of it. Read
// back from the disk, faults map 64 KiB around the page.
func dropCached(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "store", "*.zap"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no segment files in %s (%v)", dir, err)
	}
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		err = f.Sync() // dirty pages would stay
		if err == nil {
			err = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		}
		f.Close()
		if err != nil {
			t.Skipf("fadvise: %v", err)
		}
	}
}

// TestStoredIDsReadWithoutMapping: the ids of a large segment's hits are
// read from its file, not through its mapping, so that questions whose
// hits are spread over the segment do not leave its stored section in
// the process's resident set; and they are the right ids.
func TestStoredIDsReadWithoutMapping(t *testing.T) {
	const n = 60000
	build := func(t *testing.T) string {
		dir := persistedIndex(t, n, func(i int) engine.TextDoc {
			return engine.TextDoc{ID: uint64(1000 + i), Text: fmt.Sprintf("note%d walrus", i)}
		})
		dropCached(t, dir)
		return dir
	}
	for _, c := range []struct {
		name      string
		preadMin  int
		maxMapped float64 // share of the stored section's pages
	}{
		{"every segment by pread", 0, 0.02},
		// The control: through the mapping, the same questions map most
		// of it, so the check above can fail.
		{"through the mapping", 1 << 62, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer fts.SetStoredIDsPreadMin(c.preadMin)()
			dir := build(t)
			x, err := fts.Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			for i := 0; i < n; i += 997 {
				hits, err := x.Search(context.Background(), fmt.Sprintf("note%d", i), 10, engine.TextFilter{})
				if err != nil {
					t.Fatal(err)
				}
				if len(hits) != 1 || hits[0].ID != uint64(1000+i) {
					t.Fatalf("note%d: hits %+v, want record %d alone", i, hits, 1000+i)
				}
			}
			mapped, pages := storedPagesMapped(t, dir)
			t.Logf("%d of the stored sections' %d pages mapped", mapped, pages)
			if share := float64(mapped) / float64(pages); share > c.maxMapped {
				t.Fatalf("%d of the stored sections' %d pages mapped after the searches (%.2f, want at most %.2f)", mapped, pages, share, c.maxMapped)
			}
			if c.maxMapped == 1 && float64(mapped) < 0.5*float64(pages) {
				t.Fatalf("the control maps only %d of %d pages: the pread case proves nothing", mapped, pages)
			}
		})
	}
}

// TestStoredIDsDamaged: a stored index damaged after the index was
// opened (its checksum is checked at Open) fails the search with
// ErrCorrupt when the ids are read by pread, and does not panic.
func TestStoredIDsDamaged(t *testing.T) {
	defer fts.SetStoredIDsPreadMin(0)()
	const n = 3000
	dir := persistedIndex(t, n, func(i int) engine.TextDoc {
		return engine.TextDoc{ID: uint64(1000 + i), Text: fmt.Sprintf("note%d walrus", i)}
	})
	x, err := fts.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if hits, err := x.Search(context.Background(), "note7", 10, engine.TextFilter{}); err != nil || len(hits) != 1 || hits[0].ID != 1007 {
		t.Fatalf("before the damage: %+v, %v", hits, err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "store", "*.zap"))
	if err != nil || len(files) != 1 {
		t.Fatalf("segment files %v (%v), want one", files, err)
	}
	storedIndex, numDocs := storedIndexAt(t, files[0])
	f, err := os.OpenFile(files[0], os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	ff := make([]byte, 8*numDocs)
	for i := range ff {
		ff[i] = 0xff
	}
	_, err = f.WriteAt(ff, int64(storedIndex))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	hits, err := x.Search(context.Background(), "note9", 10, engine.TextFilter{})
	if !errors.Is(err, fts.ErrCorrupt) {
		t.Fatalf("after the damage: %+v, %v; want ErrCorrupt", hits, err)
	}
	if msg := err.Error(); strings.Count(msg, "fts: ") != 1 || !strings.HasPrefix(msg, "fts: search: index corrupt") {
		t.Fatalf("message %q: want one prefix, \"fts: search: index corrupt ...\"", msg)
	}
	t.Log(err)
}
