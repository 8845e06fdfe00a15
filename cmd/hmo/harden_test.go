package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// jsonlRecords writes n JSONL records to a file and returns its path.
func jsonlRecords(t *testing.T, name string, n, from int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"text":"note %d: the harbour tide gauge %d reads %d centimetres","session":"s%d"}`+"\n", from+i, (from+i)%83, (from+i)*7, (from+i)/100)
	}
	return writeFile(t, name, []byte(b.String()))
}

// records is the store's record count, read through a read-only stats.
func records(t *testing.T, dir string) int {
	t.Helper()
	r := execHMO(t, "", nil, "stats", "--json", "--dir", dir)
	if r.code != 0 {
		t.Fatalf("stats: %v", r)
	}
	var s struct {
		Records int `json:"records"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("stats --json %q: %v", r.stdout, err)
	}
	return s.Records
}

// mountTmpfs mounts a tmpfs of size bytes on a new directory, or skips
// loudly where the machine does not allow it.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("LOUD SKIP: disk-full test needs root to mount a small tmpfs")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0700", size), "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("LOUD SKIP: cannot mount a tmpfs here (%v: %s)", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	return mnt
}

// fill writes a file until the file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !strings.Contains(err.Error(), "no space") {
				t.Fatal(err)
			}
			break
		}
	}
	for _, n := range []int{4096, 512, 1} { // the last scraps
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
	f.Sync()
}

// TestDiskFull is finding 3 of issue 14: on a full disk every open failed,
// even stats, export and recall (opening synced the text index), an
// import that failed said "after 0 records" although a batch had
// committed, and a recall printed its results and then exited 1.
func TestDiskFull(t *testing.T) {
	mnt := mountTmpfs(t, 48<<20)
	dir := filepath.Join(mnt, "store")
	if r := execHMO(t, "", nil, "import", "--dir", dir, jsonlRecords(t, "base.jsonl", 3000, 0)); r.code != 0 {
		t.Fatalf("import: %v", r)
	}
	before := records(t, dir)
	filler := filepath.Join(mnt, "filler")
	fill(t, filler)

	// Reads answer.
	if got := records(t, dir); got != before {
		t.Fatalf("stats on a full disk: %d records, want %d", got, before)
	}
	exp := execHMO(t, "", nil, "export", "--dir", dir)
	if exp.code != 0 || strings.Count(exp.stdout, "\n") != before {
		t.Fatalf("export on a full disk: exit %d, %d lines, want %d: %s", exp.code, strings.Count(exp.stdout, "\n"), before, exp.stderr)
	}
	rec := execHMO(t, "", nil, "recall", "--dir", dir, "--mode", "flat", "tide gauge 42")
	if rec.code != 0 || !strings.Contains(rec.stdout, "gauge 42 ") {
		t.Fatalf("recall on a full disk: %v", rec)
	}
	for _, cmd := range []string{"get", "persona"} {
		args := []string{cmd, "--dir", dir}
		if cmd == "get" {
			args = append(args, "1")
		}
		if r := execHMO(t, "", nil, args...); r.code != 0 {
			t.Errorf("%s on a full disk: %v", cmd, r)
		}
	}

	// Writes fail, and say exactly what committed.
	add := execHMO(t, "", nil, "add", "--dir", dir, "a note that does not fit")
	imp := execHMO(t, "", nil, "import", "--dir", dir, jsonlRecords(t, "more.jsonl", 5000, 10000))
	after := records(t, dir)
	if add.code == 0 && imp.code == 0 {
		t.Fatalf("writes on a full disk succeeded: add %v, import %v", add, imp)
	}
	committed := 0
	if add.code == 0 {
		committed++
	}
	if imp.code != 0 {
		var n, m int
		switch i := strings.Index(imp.stderr, "records committed"); {
		case strings.Contains(imp.stderr, "nothing imported"):
		case i < 0:
			t.Fatalf("import on a full disk does not say what committed: %v", imp)
		default:
			if _, err := fmt.Sscanf(imp.stderr[strings.LastIndex(imp.stderr[:i], ": ")+2:], "%d of %d", &n, &m); err != nil {
				t.Fatalf("import message %q: %v", imp.stderr, err)
			}
		}
		committed += n
	} else {
		committed += 5000
	}
	if after != before+committed {
		t.Fatalf("records %d after the failed writes, want %d + %d committed (add: %v; import: %v)", after, before, committed, add, imp)
	}

	// Some space back, less than the next import needs: a batch or more
	// commits, then the disk fills; the message says how many committed.
	st, err := os.Stat(filler)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filler, st.Size()-3<<20); err != nil {
		t.Fatal(err)
	}
	base := records(t, dir)
	imp = execHMO(t, "", nil, "import", "--dir", dir, jsonlRecords(t, "most.jsonl", 20000, 20000))
	n, m := 20000, 0
	if imp.code != 0 {
		i := strings.Index(imp.stderr, "records committed")
		if i < 0 {
			t.Fatalf("import filling the disk does not say what committed: %v", imp)
		}
		if _, err := fmt.Sscanf(imp.stderr[strings.LastIndex(imp.stderr[:i], ": ")+2:], "%d of %d", &n, &m); err != nil {
			t.Fatalf("import message %q: %v", imp.stderr, err)
		}
	}
	if got := records(t, dir); got != base+n {
		t.Fatalf("records %d after an import that reported %d committed, want %d: %v", got, n, base+n, imp)
	}
	t.Logf("import filling the disk: %d committed (exit %d: %s)", n, imp.code, strings.TrimSpace(imp.stderr))
	after = base + n

	// Space back: the store works.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if r := execHMO(t, "", nil, "add", "--dir", dir, "the breakwater light is green"); r.code != 0 {
		t.Fatalf("add once space is back: %v", r)
	}
	if r := execHMO(t, "", nil, "recall", "--dir", dir, "breakwater light"); r.code != 0 || !strings.Contains(r.stdout, "breakwater") {
		t.Fatalf("recall once space is back: %v", r)
	}
	if got := records(t, dir); got != after+1 {
		t.Fatalf("records %d, want %d", got, after+1)
	}
	t.Logf("records: %d before, %d after the full-disk writes (add exit %d, import exit %d: %s)", before, after, add.code, imp.code, strings.TrimSpace(imp.stderr))
}

// noPanic fails when a command crashed instead of reporting.
func noPanic(t *testing.T, what string, r result) {
	t.Helper()
	if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") || r.code > 2 {
		t.Fatalf("%s crashed: %v", what, r)
	}
}

// TestDamageMatrix is finding 2 (and 11) of issue 14 through the CLI: on
// a damaged hmo.db, stats, export, add, recall and doctor panicked; a
// zero-length file said "bad file descriptor"; a deleted one made add
// start a new store. Every command now reports, doctor finds the damage,
// and salvage copies what can be read.
func TestDamageMatrix(t *testing.T) {
	base := filepath.Join(t.TempDir(), "base")
	if r := execHMO(t, "", nil, "import", "--dir", base, jsonlRecords(t, "base.jsonl", 3000, 0)); r.code != 0 {
		t.Fatalf("import: %v", r)
	}
	db, err := os.ReadFile(filepath.Join(base, "hmo.db"))
	if err != nil {
		t.Fatal(err)
	}
	// flip damages the first page at or after a share of the file that
	// the store uses: a free page's damage is harmless, and which pages
	// are free depends on how the import wrote the file.
	flipAt := func(off int) []byte {
		b := append([]byte(nil), db...)
		for i := off; i < off+64; i++ {
			b[i] ^= 0xff
		}
		return b
	}
	flip := func(at float64) []byte { return flipAt(livePageAt(t, filepath.Join(base, "hmo.db"), at)) }
	for _, d := range []struct {
		name string
		data []byte
	}{
		{"truncated to half", db[:len(db)/2]},
		{"64 bytes flipped mid-file", flip(0.5)},
		{"64 bytes flipped at 30%", flip(0.3)},
		// The page that lists the buckets: no record can be looked up,
		// salvage reads them from their own pages.
		{"bucket list page flipped", flipAt(rootPage(t, filepath.Join(base, "hmo.db")) * int(binary.LittleEndian.Uint32(db[16+8:])))},
		{"zero-length", []byte{}},
	} {
		t.Run(d.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "hmo.db"), d.data, 0o600); err != nil {
				t.Fatal(err)
			}
			// Doctor first: a write below may rewrite the damaged page
			// (bbolt copies a page it changes), which repairs it.
			doc := execHMO(t, "", nil, "doctor", "--dir", dir)
			noPanic(t, "doctor", doc)
			if doc.code != 1 || !strings.Contains(doc.stdout, "FAIL  store") {
				t.Errorf("doctor on a damaged store: %v", doc)
			}
			for _, args := range [][]string{
				{"stats"}, {"export"}, {"add", "one more note"}, {"recall", "tide gauge"}, {"recall", "--mode", "flat", "tide gauge"}, {"get", "5"}, {"persona"},
			} {
				r := execHMO(t, "", nil, append(args, "--dir", dir)...)
				noPanic(t, args[0], r)
				if r.code != 0 && !strings.Contains(r.stderr, "damaged") && !strings.Contains(r.stderr, "corrupt") {
					t.Errorf("%s: exit %d without naming the damage: %s", args[0], r.code, r.stderr)
				}
				if strings.Contains(r.stderr, "bad file descriptor") {
					t.Errorf("%s: %s", args[0], r.stderr)
				}
			}
			out := filepath.Join(t.TempDir(), "salvaged")
			sal := execHMO(t, "", nil, "salvage", "--dir", dir, out)
			noPanic(t, "salvage", sal)
			t.Logf("salvage: exit %d %s%s", sal.code, sal.stdout, sal.stderr)
			if sal.code == 0 {
				if n := records(t, out); n == 0 && len(d.data) > 0 && !strings.Contains(d.name, "truncated") {
					t.Errorf("salvage copied nothing: %v", sal)
				} else if strings.HasPrefix(d.name, "bucket list") && n != 3000 {
					t.Errorf("salvage copied %d of 3000 records: %v", n, sal)
				}
			}
		})
	}
}

// livePageAt returns the offset of the first page at or after share at
// of the bbolt file at path that holds a leaf of the store, or of the
// last such page before it when every page from there on is free (an
// import's last transactions may reuse the file's early pages). It may
// be the page that lists the buckets (the root bucket's leaf): salvage
// then reads the records from their own pages.
func livePageAt(t *testing.T, path string, at float64) int {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	off := -1
	err = db.View(func(tx *bolt.Tx) error {
		ps := db.Info().PageSize
		from := int(float64(tx.Size())*at) / ps
		last := -1 // the last live page before from
		for id := 2; ; {
			info, err := tx.Page(id)
			if err != nil {
				return err
			}
			if info == nil {
				// Every page from there on is free (how the import's
				// last transactions reused pages decides it): the
				// last live page before it.
				if last < 0 {
					return fmt.Errorf("no live page in %d pages", id)
				}
				off = last * ps
				return nil
			}
			if info.Type == "leaf" || info.Type == "branch" {
				if id >= from {
					off = id * ps
					return nil
				}
				last = id
			}
			id += 1 + info.OverflowCount
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return off
}

// TestNoSilentNewStore: a deleted hmo.db made add start a new, empty
// store while stats said "no store"; a mistyped --dir of a read command
// left a store behind.
func TestNoSilentNewStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	if r := execHMO(t, "", nil, "add", "--dir", dir, "first note in a new directory"); r.code != 0 {
		t.Fatalf("add in a new directory: %v", r)
	}
	if err := os.Remove(filepath.Join(dir, "hmo.db")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "x"}, {"import", jsonlRecords(t, "a.jsonl", 3, 0)}, {"stats"}, {"recall", "x"}, {"persona"}} {
		r := execHMO(t, "", nil, append(args, "--dir", dir)...)
		if r.code == 0 || !strings.Contains(r.stderr, "no store") {
			t.Errorf("%s without hmo.db: %v, want a 'no store' error", args[0], r)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "hmo.db")); err == nil {
		t.Fatal("a new store was created silently")
	}
	if r := execHMO(t, "", nil, "add", "--create", "--dir", dir, "x"); r.code != 0 {
		t.Fatalf("add --create: %v", r)
	}
	typo := filepath.Join(t.TempDir(), "typo")
	for _, cmd := range []string{"persona", "stats", "export", "recall"} {
		args := []string{cmd, "--dir", typo}
		if cmd == "recall" {
			args = append(args, "x")
		}
		execHMO(t, "", nil, args...)
		if _, err := os.Stat(typo); err == nil {
			t.Fatalf("%s --dir typo created %s", cmd, typo)
		}
	}
}

// TestDoctorReportsRebuilds is finding 11: doctor said "ok" after hmo
// silently rebuilt a deleted or damaged index.
func TestDoctorReportsRebuilds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	if r := execHMO(t, "", nil, "import", "--dir", dir, jsonlRecords(t, "base.jsonl", 300, 0)); r.code != 0 {
		t.Fatalf("import: %v", r)
	}
	if r := execHMO(t, "", nil, "doctor", "--dir", dir); strings.Contains(r.stdout, "rebuilt") {
		t.Fatalf("doctor on an intact store reports a rebuild: %s", r.stdout)
	}
	if err := os.RemoveAll(filepath.Join(dir, "text")); err != nil {
		t.Fatal(err)
	}
	if r := execHMO(t, "", nil, "recall", "--dir", dir, "tide gauge 42"); r.code != 0 || !strings.Contains(r.stdout, "gauge 42 ") {
		t.Fatalf("recall after the text index was deleted: %v", r)
	}
	r := execHMO(t, "", nil, "doctor", "--dir", dir)
	if !strings.Contains(r.stdout, "rebuilt") || !strings.Contains(r.stdout, "text index") {
		t.Fatalf("doctor does not report the rebuild: %v", r)
	}
}

// signalAfter starts hmo with args, sends sig once stderr shows ready
// (or after wait), and returns how long it took to exit after the
// signal and its exit code.
func signalAfter(t *testing.T, wait time.Duration, sig syscall.Signal, args ...string) (time.Duration, int, string) {
	t.Helper()
	cmd := exec.Command(hmoBinary(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	// stdin is a pipe that stays open: a command reading it blocks.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(wait)
	start := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v: still running 30 s after %v", args, sig)
	}
	return time.Since(start), cmd.ProcessState.ExitCode(), stderr.String()
}

// TestSignalsStopLongWork is finding 10 of issue 14: a plain recall
// ignored SIGTERM for 7 s or more while it built the HNSW graph. Every
// long operation stops within about a second of SIGINT or SIGTERM, and
// the store stays consistent: whole batches only, and it opens.
func TestSignalsStopLongWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 30,000-record store")
	}
	dir := filepath.Join(t.TempDir(), "store")
	// A read that never ends (stdin left open) ignored the signal.
	took, code, _ := signalAfter(t, 300*time.Millisecond, syscall.SIGTERM, "import", "--dir", dir, "-")
	if took > 3*time.Second || code == 0 {
		t.Errorf("import from a stdin that never ends: exit %d %s after SIGTERM", code, took)
	}
	big := jsonlRecords(t, "big.jsonl", 30000, 0)
	took, code, stderr := signalAfter(t, 1500*time.Millisecond, syscall.SIGTERM, "import", "--dir", dir, big)
	t.Logf("import: exit %d %s after SIGTERM: %s", code, took, strings.TrimSpace(stderr))
	if took > 3*time.Second {
		t.Errorf("import took %s to stop after SIGTERM", took)
	}
	n := records(t, dir)
	if n%1000 != 0 {
		t.Errorf("%d records after an interrupted import: not whole batches", n)
	}
	if r := execHMO(t, "", nil, "import", "--dir", dir, jsonlRecords(t, "rest.jsonl", 30000-n, n)); r.code != 0 {
		t.Fatalf("import the rest: %v", r)
	}
	// A recall that must build the archive's vector graph from scratch.
	if err := os.RemoveAll(filepath.Join(dir, "vectors")); err != nil {
		t.Fatal(err)
	}
	took, code, stderr = signalAfter(t, 100*time.Millisecond, syscall.SIGINT, "recall", "--dir", dir, "--mode", "flat", "tide gauge 42")
	t.Logf("recall: exit %d %s after SIGINT: %s", code, took, strings.TrimSpace(stderr))
	if took > 3*time.Second {
		t.Errorf("recall took %s to stop after SIGINT", took)
	}
	took, code, stderr = signalAfter(t, 300*time.Millisecond, syscall.SIGTERM, "compact", "--dir", dir)
	t.Logf("compact: exit %d %s after SIGTERM: %s", code, took, strings.TrimSpace(stderr))
	if took > 3*time.Second {
		t.Errorf("compact took %s to stop after SIGTERM", took)
	}
	doc := execHMO(t, "", nil, "doctor", "--dir", dir)
	if !strings.Contains(doc.stdout, "ok    store file: consistent") || records(t, dir) != 30000 {
		t.Fatalf("store after the interruptions: %v", doc)
	}
	if r := execHMO(t, "", nil, "recall", "--dir", dir, "--mode", "flat", "tide gauge 42"); r.code != 0 || !strings.Contains(r.stdout, "gauge 42 ") {
		t.Fatalf("recall after the interruptions: %v", r)
	}
}

// TestRelativeDirDaemon is finding 6: a daemon started with a relative
// --dir wrote a relative socket path; from another directory clients
// could not reach it and "hmo serve --stop" said no daemon ran.
func TestRelativeDirDaemon(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	start := exec.Command(hmoBinary(t), "serve", "--detach", "--dir", "store", "--idle", "1m")
	start.Dir = a
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("serve --detach: %v %s", err, out)
	}
	abs := filepath.Join(a, "store")
	t.Cleanup(func() { execHMO(t, "", nil, "serve", "--stop", "--dir", abs) })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(filepath.Join(abs, "serve.json")); err == nil && strings.Contains(string(b), `"socket": "/`) {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(abs, "serve.json"))
			t.Fatalf("serve.json without an absolute socket path: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop := exec.Command(hmoBinary(t), "serve", "--stop", "--dir", abs)
	stop.Dir = b
	out, err := stop.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "stopped") {
		t.Fatalf("serve --stop from another directory: %v %s", err, out)
	}
}

// rootPage is the id of the root bucket's page (the list of buckets) in
// the bbolt file at path: the root field of the meta page (0 or 1) with
// the higher transaction id.
func rootPage(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Page header 16 bytes; meta: magic, version, page size, flags (4
	// each), root bucket {root pgid, sequence}, freelist pgid, pgid, txid.
	const metaAt, rootAt, txidAt = 16, 16 + 16, 16 + 16 + 16 + 8 + 8
	ps := int(binary.LittleEndian.Uint32(b[metaAt+8:]))
	best, root := uint64(0), -1
	for _, off := range []int{0, ps} {
		if off+txidAt+8 > len(b) {
			continue
		}
		if tx := binary.LittleEndian.Uint64(b[off+txidAt:]); root < 0 || tx > best {
			best, root = tx, int(binary.LittleEndian.Uint64(b[off+rootAt:]))
		}
	}
	return root
}
