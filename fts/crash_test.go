package fts_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/fts"
)

// crashEnv names the index directory of the child process of TestCrash.
const crashEnv = "HMO_FTS_CRASH_DIR"

// crashBatch is batch w of the crash test: it adds doc w and deletes doc
// w-3, so the index at watermark w holds exactly docs w-2, w-1 and w.
func crashBatch(w uint64) ([]engine.TextDoc, []uint64) {
	docs := []engine.TextDoc{{ID: w, Text: fmt.Sprintf("tok%d", w)}}
	if w > 3 {
		return docs, []uint64{w - 3}
	}
	return docs, nil
}

// TestCrash kills a process that applies batches in a loop and checks
// that the reopened index holds exactly the batches up to its watermark,
// and at least those Apply had returned from.
func TestCrash(t *testing.T) {
	if dir := os.Getenv(crashEnv); dir != "" {
		crashChild(dir)
		return
	}
	dir := filepath.Join(t.TempDir(), "text")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	var acked uint64
	sc := bufio.NewScanner(out)
	for acked < 25 && sc.Scan() {
		if acked, err = strconv.ParseUint(sc.Text(), 10, 64); err != nil {
			t.Fatalf("child said %q", sc.Text())
		}
	}
	must(t, cmd.Process.Kill())
	_ = cmd.Wait()
	if acked < 25 {
		t.Fatalf("child stopped after %d batches", acked)
	}

	x, err := fts.Open(dir, nil)
	must(t, err)
	defer x.Close()
	wm, err := x.Watermark()
	must(t, err)
	t.Logf("acknowledged %d, watermark after reopen %d", acked, wm)
	if wm < acked {
		t.Errorf("watermark %d < %d acknowledged by Apply", wm, acked)
	}
	for id := wm - 4; id <= wm+1; id++ {
		var want []uint64
		if id+2 >= wm && id <= wm {
			want = []uint64{id}
		}
		got := ids(search(t, x, fmt.Sprintf("tok%d", id), 5, engine.TextFilter{}))
		if len(got) != len(want) || !slices.Equal(got, want) {
			t.Errorf("watermark %d: doc %d: Search = %v, want %v", wm, id, got, want)
		}
	}
	if n, err := x.DocCount(); err != nil || n != 3 {
		t.Errorf("DocCount = %d, %v, want 3", n, err)
	}
}

// crashChild applies crash batches until it is killed, printing each
// watermark once Apply has returned.
func crashChild(dir string) {
	x, err := fts.Open(dir, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for w := uint64(1); w < 100000; w++ {
		docs, dels := crashBatch(w)
		if err := x.Apply(docs, dels, w); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(w)
	}
}
