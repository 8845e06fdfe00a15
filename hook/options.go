package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hmo-dev/hmo/capture"
)

// Defaults for Options.
const (
	DefaultTimeout       = 3 * time.Second // whole hook, stdin to output
	DefaultContextTokens = 1500            // estimated tokens of context printed
	DefaultBatch         = 100             // turns per Add call (one transaction each)
	DefaultStaleLock     = 30 * time.Second
	// MaxPayloadBytes is the largest hook payload read from stdin.
	MaxPayloadBytes = 1 << 20
	// DefaultMaxReadBytes is how much new transcript one run reads at
	// most: above claudecode.MaxLineBytes, so the longest line fits.
	DefaultMaxReadBytes = 64 << 20
)

// Options configure Claude. The zero value, or nil, means the defaults.
type Options struct {
	// StateDir holds the per-transcript ingestion state (directory 0700,
	// files 0600). Default DefaultStateDir().
	StateDir string
	// Timeout bounds the whole hook. Default DefaultTimeout.
	Timeout time.Duration
	// ContextTokens is the token budget of the context printed by
	// SessionStart and UserPromptSubmit. Default DefaultContextTokens.
	ContextTokens int
	// Batch is the number of turns added per call; the ingestion state
	// advances after each. Default DefaultBatch.
	Batch int
	// StaleLock is the age after which another hook's ingestion lock on
	// the same transcript is taken to be left by a crash and removed.
	// Default DefaultStaleLock.
	StaleLock time.Duration
	// Clock gives the current time. Default time.Now.
	Clock func() time.Time
	// Distiller distils the facts of each ingested turn. Default the
	// offline one, capture.New(); with a chat model, a *capture.LLM.
	Distiller capture.Distiller
	// TranscriptRoots are the directories transcripts must lie under
	// (see DefaultTranscriptRoots and the rule in transcript.go).
	// Default DefaultTranscriptRoots().
	TranscriptRoots []string
	// MaxReadBytes caps the transcript bytes read per run; the next run
	// goes on from where this one stopped. Default DefaultMaxReadBytes.
	MaxReadBytes int64
}

// DefaultStateDir is "hmo/hook" under the user's cache directory.
func DefaultStateDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "hmo", "hook"), nil
}

// withDefaults clones opts, fills in defaults and validates.
func withDefaults(opts *Options) (*Options, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.StateDir == "" {
		d, err := DefaultStateDir()
		if err != nil {
			return nil, err
		}
		o.StateDir = d
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.ContextTokens == 0 {
		o.ContextTokens = DefaultContextTokens
	}
	if o.Batch == 0 {
		o.Batch = DefaultBatch
	}
	if o.StaleLock == 0 {
		o.StaleLock = DefaultStaleLock
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Distiller == nil {
		o.Distiller = capture.New()
	}
	if o.TranscriptRoots == nil {
		o.TranscriptRoots = DefaultTranscriptRoots()
	}
	if o.MaxReadBytes == 0 {
		o.MaxReadBytes = DefaultMaxReadBytes
	}
	if o.MaxReadBytes < 0 || o.Timeout < 0 || o.ContextTokens < 0 || o.Batch < 0 || o.StaleLock < 0 {
		return nil, fmt.Errorf("%w: negative Timeout, ContextTokens, Batch, StaleLock or MaxReadBytes", ErrOption)
	}
	return &o, nil
}
