package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
)

// Flag groups a command may register besides --dir (see storeFlags.register).
const (
	withMode       = 1 << iota // --mode
	withOllama                 // --ollama-host
	withChat                   // --chat-model (and --ollama-host)
	withEmbedder               // --embedder (and --ollama-host)
	withEnrichWait             // --enrich-wait
)

// storeFlags are the flags of every command that opens a store.
type storeFlags struct {
	dir    string
	mode   string
	models modelFlags
}

// register adds --dir and the flag groups in which to fs. Flags left out
// keep their defaults.
func (s *storeFlags) register(fs *pflag.FlagSet, which int) {
	s.mode = string(engine.DefaultMode)
	s.models.enrichWait = defaultEnrichWait
	fs.StringVar(&s.dir, "dir", "", "store directory (default $HMO_DIR or the user's data directory)")
	if which&withMode != 0 {
		fs.StringVar(&s.mode, "mode", string(engine.DefaultMode), "recall mode: tiered (HMO tier walk: Tier 1, Tier 2, then the archive) or flat (search the whole archive)")
	}
	s.models.register(fs, which)
}

// path is the store directory: --dir, $HMO_DIR or the default.
func (s *storeFlags) path(env *env) (string, error) {
	if s.dir != "" {
		return s.dir, nil
	}
	if d := env.getenv(hmo.EnvDir); d != "" {
		return d, nil
	}
	return hmo.DefaultDir()
}

// open opens the store, creating it if needed.
func (s *storeFlags) open(env *env) (*engine.Engine, error) {
	dir, err := s.path(env)
	if err != nil {
		return nil, err
	}
	return s.openDir(env, dir)
}

// openDir opens the store in dir in the mode the flags ask for, with the
// models they configure.
func (s *storeFlags) openDir(env *env, dir string) (*engine.Engine, error) {
	m := engine.Mode(s.mode)
	if m != engine.ModeFlat && m != engine.ModeTiered {
		return nil, usageError{fmt.Sprintf("--mode %q: want flat or tiered", s.mode)}
	}
	e, err := hmo.OpenWith(dir, &engine.Options{Mode: m}, s.models.resolve(env))
	if errors.Is(err, engine.ErrLocked) {
		return nil, s.lockedBy(env, err)
	}
	return e, err
}

// lockedBy explains a store lock held by the daemon: this command needs
// the store to itself.
func (s *storeFlags) lockedBy(env *env, err error) error {
	c, pid := s.runningDaemon(context.Background(), env)
	if c == nil {
		return err
	}
	c.Close()
	return fmt.Errorf("%w: the hmo daemon (pid %d) serves it; stop it with 'hmo serve --stop' and run this again (agents restart it when they need it)", err, pid)
}

// openExisting opens the store, refusing to create one: commands that only
// read or delete should not leave an empty store behind a mistyped path.
func (s *storeFlags) openExisting(env *env) (*engine.Engine, error) {
	dir, err := s.path(env)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, engine.DBFile)); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no store in %s (create one with 'hmo init --dir %s')", dir, dir)
	}
	return s.openDir(env, dir)
}

// filterFlags are the record filters of recall and list.
type filterFlags struct {
	scope, session, from, to string
}

func (f *filterFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.scope, "scope", "", "only this scope")
	fs.StringVar(&f.session, "session", "", "only this session")
	fs.StringVar(&f.from, "from", "", "only records at or after this time (RFC 3339 or a date)")
	fs.StringVar(&f.to, "to", "", "only records before this time (RFC 3339 or a date)")
}

// filter is the filter the flags describe.
func (f *filterFlags) filter() (api.Filter, error) {
	from, err := parseTime(f.from)
	if err != nil {
		return api.Filter{}, err
	}
	to, err := parseTime(f.to)
	if err != nil {
		return api.Filter{}, err
	}
	return api.Filter{Scope: f.scope, Session: f.session, From: from, To: to}, nil
}

// parseTime accepts RFC 3339 or a plain date.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usageError{fmt.Sprintf("time %q: want RFC 3339 (2024-05-01T15:04:05Z) or a date (2024-05-01)", s)}
}

// closeStore closes e, keeping the first error.
func closeStore(e *engine.Engine, err *error) {
	if cerr := e.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}
