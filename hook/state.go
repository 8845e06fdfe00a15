package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// state is what has been ingested of one transcript.
type state struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"` // bytes of the transcript fully ingested
	Turns  int    `json:"turns"`  // turns added so far
}

// stateFiles names the state and lock files of a transcript.
type stateFiles struct{ state, lock string }

func filesFor(dir, transcript string) stateFiles {
	sum := sha256.Sum256([]byte(transcript))
	base := filepath.Join(dir, hex.EncodeToString(sum[:16]))
	return stateFiles{base + ".json", base + ".lock"}
}

// loadState reads the state; a missing or unreadable file starts over
// (de-duplication by source keeps that safe).
func loadState(f stateFiles, transcript string) state {
	b, err := os.ReadFile(f.state)
	var s state
	if err != nil || json.Unmarshal(b, &s) != nil || s.Path != transcript || s.Offset < 0 {
		return state{Path: transcript}
	}
	return s
}

// saveState writes the state atomically, 0600.
func saveState(f stateFiles, s state) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.state), ".state-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.state)
}

// lock takes the transcript's ingestion lock, removing one older than
// stale. The returned function releases it.
func lock(f stateFiles, now time.Time, stale time.Duration) (func(), error) {
	for try := 0; try < 2; try++ {
		l, err := os.OpenFile(f.lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintf(l, "%d\n", os.Getpid())
			l.Close()
			return func() { os.Remove(f.lock) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		fi, serr := os.Stat(f.lock)
		if serr == nil && now.Sub(fi.ModTime()) < stale {
			return nil, ErrBusy
		}
		os.Remove(f.lock)
	}
	return nil, ErrBusy
}
