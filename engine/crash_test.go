package engine_test

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

// The crash helper runs in a child process: it remembers batches and
// SIGKILLs itself inside the index update of batch crashAt, after the
// batch was committed to bbolt and before the index saw it.
const (
	envCrashDir   = "HMO_TEST_CRASH_DIR"
	envCrashSide  = "HMO_TEST_CRASH_SIDE"
	crashAt       = 5
	crashBatchLen = 20
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(envCrashDir); dir != "" {
		crashHelper(dir, os.Getenv(envCrashSide))
		return
	}
	os.Exit(m.Run())
}

// killingVector and killingText kill the process on their n-th Apply.
type killingVector struct {
	engine.VectorIndex
	calls, at int
}

func (k *killingVector) Apply(a []engine.VectorDoc, d []uint64, wm uint64) error {
	if k.calls++; k.calls == k.at {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	return k.VectorIndex.Apply(a, d, wm)
}

type killingText struct {
	engine.TextIndex
	calls, at int
}

func (k *killingText) Apply(docs []engine.TextDoc, d []uint64, wm uint64) error {
	if k.calls++; k.calls == k.at {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	return k.TextIndex.Apply(docs, d, wm)
}

func crashHelper(dir, side string) {
	o := testOptions(&fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
	openVec, openText := o.OpenVectorIndex, o.OpenTextIndex
	at := crashAt
	if side == "text-trimmed" {
		// Checkpoints trim the change log every batch, while the text
		// index persists its batches in the background.
		o.CheckpointLog, at = crashBatchLen, 3*crashAt
	}
	if side == "vector" {
		o.OpenVectorIndex = func(d string, dims int) (engine.VectorIndex, error) {
			v, err := openVec(d, dims)
			return &killingVector{VectorIndex: v, at: crashAt}, err
		}
	} else {
		o.OpenTextIndex = func(d string) (engine.TextIndex, error) {
			t, err := openText(d)
			return &killingText{TextIndex: t, at: at}, err
		}
	}
	o.Mode = engine.ModeFlat
	e, err := engine.Open(dir, o)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	// The archive's vector index opens on first use: use it now, so every
	// batch goes through it.
	if _, err := e.Recall(context.Background(), engine.Query{Text: "warm up"}); err != nil {
		fmt.Println("recall:", err)
		os.Exit(3)
	}
	for b := 1; ; b++ {
		ins := make([]engine.Input, crashBatchLen)
		for i := range ins {
			ins[i] = engine.Input{Session: strconv.Itoa(b), Text: fmt.Sprintf("batch %d line %d keyword%d", b, i, b)}
		}
		ids, err := e.Remember(context.Background(), ins...)
		if err != nil {
			fmt.Println("remember:", err)
			os.Exit(3)
		}
		fmt.Println("committed", ids[len(ids)-1])
	}
}

func TestCrashBetweenCommitAndIndexLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	for _, side := range []string{"vector", "text", "text-trimmed"} {
		t.Run(side, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashSide+"="+side)
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var lastReported uint64
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if v, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
					lastReported, _ = strconv.ParseUint(v, 10, 64)
				} else {
					t.Logf("helper: %s", sc.Text())
				}
			}
			err := cmd.Wait()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("helper ended with %v, want SIGKILL", err)
			}
			// Opening the empty store applies nothing, so Apply number
			// crashAt belongs to batch crashAt, which bbolt had committed.
			e, _ := openTest(t, dir)
			if err := e.OpenVectorIndex(); err != nil {
				t.Fatal(err)
			}
			st, err := e.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if uint64(st.Records) <= lastReported {
				t.Fatalf("records = %d, want more than the %d reported (the batch killed mid-index was committed)", st.Records, lastReported)
			}
			if st.VectorWatermark != st.LogSeq || st.TextWatermark != st.LogSeq || st.VectorLen != st.Records {
				t.Errorf("indexes did not catch up: %+v", st)
			}
			// The text index alone, searched exhaustively.
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			// xMemory's and HyMem's structures, written in the records'
			// transactions, are those a rebuild from the records writes.
			kept := dumpBuckets(t, dir, structureBuckets...)
			setMeta(t, dir, map[string][]byte{"xmemory_version": nil, "hymem_version": nil})
			openAt(t, dir, &fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}).Close()
			if rebuilt := dumpBuckets(t, dir, structureBuckets...); len(kept) == 0 || !maps.Equal(kept, rebuilt) {
				t.Errorf("after the crash the stored structures (%d keys) differ from a rebuild (%d keys)", len(kept), len(rebuilt))
			}
			o := testOptions(&fakeClock{t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
			o.Mode, o.NoVector = engine.ModeFlat, true
			lexical, err := engine.Open(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			defer lexical.Close()
			for b := 1; b <= st.Records/crashBatchLen; b++ {
				kw := fmt.Sprintf("keyword%d", b)
				res, err := lexical.Recall(context.Background(), engine.Query{Text: kw, K: crashBatchLen})
				if err != nil {
					t.Fatal(err)
				}
				found := 0
				for _, r := range res {
					if strings.HasSuffix(r.Record.Text, " "+kw) && r.TextScore > 0 {
						found++
					}
				}
				if found != crashBatchLen {
					t.Errorf("the text index finds %d records of batch %d (of %d committed), want %d", found, b, st.Records/crashBatchLen, crashBatchLen)
				}
			}
		})
	}
}
