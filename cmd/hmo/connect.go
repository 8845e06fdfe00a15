package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/client"
	"github.com/hmo-dev/hmo/engine"
)

// Daemon defaults for the processes that start it on demand.
const (
	daemonIdle        = 10 * time.Minute // a daemon started on demand stops after this long unused
	daemonOpenTimeout = 5 * time.Second  // a daemon waits this long for the store lock
)

// connectOptions say how a command reaches the store.
type connectOptions struct {
	autostart bool // start the daemon when none runs
	// direct opens the store in this process per call when no daemon
	// can run.
	direct bool
	// openTimeout bounds the wait for the store lock of a direct open.
	// Default daemonOpenTimeout.
	openTimeout time.Duration
	// startTimeout bounds the wait for a started daemon. Default
	// client.DefaultStartTimeout.
	startTimeout time.Duration
	// shortLived opens the store of direct as one command's
	// (engine.Options.ShortLived): a hook's.
	shortLived bool
}

// connect returns a client of the store's daemon with the fallbacks of
// co. The client holds no store between calls.
func (s *storeFlags) connect(env *env, co connectOptions) (*client.Client, string, error) {
	dir, err := s.path(env)
	if err != nil {
		return nil, "", err
	}
	m := engine.Mode(s.mode)
	if m != engine.ModeFlat && m != engine.ModeTiered {
		return nil, "", usageError{fmt.Sprintf("--mode %q: want flat or tiered", s.mode)}
	}
	opts := client.Options{Dir: dir, StartTimeout: co.startTimeout}
	if co.openTimeout == 0 {
		co.openTimeout = daemonOpenTimeout
	}
	if co.autostart {
		opts.Start = func(ctx context.Context) error { return startDaemon(ctx, dir, m) }
	}
	if co.direct {
		opts.OpenLocal = func() (*engine.Engine, error) {
			return hmo.OpenWith(dir, &engine.Options{Mode: m, OpenTimeout: co.openTimeout, Create: engine.CreateIfNew, ShortLived: co.shortLived}, s.models.resolve(env))
		}
	}
	c, err := client.New(&opts)
	return c, dir, err
}

// startDaemon runs "hmo serve --detach", which launches the daemon in a
// session of its own and exits at once.
func startDaemon(ctx context.Context, dir string, mode engine.Mode) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, exe, "serve", "--detach", "--dir", dir, "--mode", string(mode), "--idle", daemonIdle.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("hmo serve --detach: %v: %s", err, out)
	}
	return nil
}

// runningDaemon returns a client of the daemon serving the store, if one
// answers now; read commands use it instead of opening a store the daemon
// holds.
func (s *storeFlags) runningDaemon(ctx context.Context, env *env) (*client.Client, int) {
	c, _, err := s.connect(env, connectOptions{})
	if err != nil {
		return nil, 0
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	pid, err := c.Connect(ctx)
	if err != nil {
		return nil, 0
	}
	return c, pid
}
