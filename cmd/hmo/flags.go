package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	withCreate                 // --create (add, import)
)

// storeFlags are the flags of every command that opens a store.
type storeFlags struct {
	dir    string
	mode   string
	create bool // --create: make a store where the directory has none
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
	if which&withCreate != 0 {
		fs.BoolVar(&s.create, "create", false, "create the store if the directory has none (without it, only a directory that does not exist yet, or is empty, gets a new store)")
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

// open opens the store for writing. It creates one only where the
// directory does not exist yet or is empty, or with --create: a
// directory that lost its hmo.db is not silently given a new, empty
// store (init creates one anywhere).
func (s *storeFlags) open(env *env) (*engine.Engine, error) {
	c := engine.CreateIfNew
	if s.create {
		c = engine.CreateAlways
	}
	return s.openWith(env, engine.Options{Create: c})
}

// openInit opens the store, creating it wherever it is missing.
func (s *storeFlags) openInit(env *env) (*engine.Engine, error) {
	return s.openWith(env, engine.Options{Create: engine.CreateAlways})
}

// openRead opens an existing store read-only (stats, get, export,
// persona, doctor): nothing is written, so these answer on a full disk.
// A store of an older layout is opened for writing once.
func (s *storeFlags) openRead(env *env) (*engine.Engine, error) {
	e, err := s.openWith(env, engine.Options{ReadOnly: true})
	if errors.Is(err, engine.ErrNeedsWrite) {
		return s.openWith(env, engine.Options{Create: engine.CreateNever})
	}
	return e, err
}

// openWith opens the store in the flags' directory with base options.
func (s *storeFlags) openWith(env *env, base engine.Options) (*engine.Engine, error) {
	dir, err := s.path(env)
	if err != nil {
		return nil, err
	}
	return s.openDir(env, dir, base)
}

// openDir opens the store in dir in the mode the flags ask for, with the
// models they configure.
func (s *storeFlags) openDir(env *env, dir string, base engine.Options) (*engine.Engine, error) {
	m := engine.Mode(s.mode)
	if m != engine.ModeFlat && m != engine.ModeTiered {
		return nil, usageError{fmt.Sprintf("--mode %q: want flat or tiered", s.mode)}
	}
	base.Mode = m
	// A command holds the store until it exits: the vector index's
	// builds are left to the daemon, hmo import and hmo compact
	// (FinishBuilds), which finish them.
	base.ShortLived = true
	e, err := hmo.OpenWith(dir, &base, s.models.resolve(env))
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
	return s.openDir(env, dir, engine.Options{Create: engine.CreateNever})
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

// closeStoreWarn closes e after its results were printed: a failure to
// save (a full disk) is a warning, not a failed command.
func closeStoreWarn(env *env, name string, e *engine.Engine) {
	if err := e.Close(); err != nil {
		fmt.Fprintf(env.stderr, "hmo %s: warning: %s (the results above are complete; the indexes catch up at the next open)\n", name, strings.TrimPrefix(err.Error(), "hmo: "))
	}
}

// closeStore closes e, keeping the first error.
func closeStore(e *engine.Engine, err *error) {
	if cerr := e.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}
