package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/client"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/server"
	"github.com/hmo-dev/hmo/ui"
)

// daemonLog is the daemon's log file in the store directory.
const daemonLog = "serve.log"

func runServe(ctx context.Context, env *env, args []string) (err error) {
	fs := newFlags(env, "serve", "")
	var sf storeFlags
	sf.register(fs)
	addr := fs.String("addr", server.DefaultAddr, "loopback TCP address (port 0: any free port; '-': none)")
	idle := fs.Duration("idle", 0, "stop after this long without a request (0: never)")
	detach := fs.Bool("detach", false, "start the daemon in the background, logging to serve.log in the store, and return")
	stop := fs.Bool("stop", false, "stop the daemon serving the store, and wait for it to exit")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{"serve takes no arguments"}
	}
	dir, err := sf.path(env)
	if err != nil {
		return err
	}
	if *detach {
		return detachServe(env, dir, args)
	}
	if *stop {
		return stopServe(ctx, env, &sf)
	}
	m := engine.Mode(sf.mode)
	if m != engine.ModeFlat && m != engine.ModeTiered {
		return usageError{fmt.Sprintf("--mode %q: want flat or tiered", sf.mode)}
	}
	e, err := hmo.Open(dir, &engine.Options{Mode: m, OpenTimeout: daemonOpenTimeout})
	if errors.Is(err, engine.ErrLocked) {
		return lostRace(ctx, env, &sf, err)
	}
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	svc := api.NewLocal(e)
	browser, err := ui.New(svc, &ui.Options{Persona: ui.EnginePersona(e)})
	if err != nil {
		return err
	}
	srv, err := server.New(svc, &server.Options{Dir: dir, Addr: *addr, Idle: *idle, UI: browser})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, srv.Close()) }()
	info, err := srv.Start()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "hmo serve: pid %d, store %s, socket %s, http://%s (token in %s)\n",
		info.PID, dir, info.Socket, info.Addr, filepath.Join(dir, server.TokenFile))
	select {
	case <-ctx.Done():
		fmt.Fprintln(env.stderr, "hmo serve: stopping")
	case <-srv.Done():
		fmt.Fprintf(env.stderr, "hmo serve: idle for %s, stopping\n", *idle)
	}
	return nil
}

// lostRace handles a store held by another process: when that is a
// daemon, this one is not needed and exits cleanly.
func lostRace(ctx context.Context, env *env, sf *storeFlags, err error) error {
	if _, pid := sf.runningDaemon(ctx, env); pid != 0 {
		fmt.Fprintf(env.stderr, "hmo serve: daemon pid %d already serves this store\n", pid)
		return nil
	}
	return err
}

// detachServe launches "hmo serve" without --detach in a session of its
// own and returns at once; the daemon is adopted by init.
func detachServe(env *env, dir string, args []string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	rest := slices.DeleteFunc(slices.Clone(args), func(a string) bool {
		return strings.TrimLeft(strings.SplitN(a, "=", 2)[0], "-") == "detach"
	})
	if !slices.Contains(rest, "--dir") && !slices.Contains(rest, "-dir") {
		rest = append(rest, "--dir", dir)
	}
	pid, err := client.Detach(exe, append([]string{"serve"}, rest...), filepath.Join(dir, daemonLog))
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%d\n", pid)
	return nil
}

// stopWait bounds the wait for a stopped daemon to exit.
const stopWait = 15 * time.Second

// stopServe asks the daemon serving the store to stop (SIGTERM) and waits
// until its process is gone. No daemon is not an error.
func stopServe(ctx context.Context, env *env, sf *storeFlags) error {
	c, pid := sf.runningDaemon(ctx, env)
	if c == nil {
		fmt.Fprintln(env.stderr, "hmo serve: no daemon serves this store")
		return nil
	}
	c.Close()
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop daemon pid %d: %w", pid, err)
	}
	deadline := time.Now().Add(stopWait)
	for time.Now().Before(deadline) {
		if p.Signal(syscall.Signal(0)) != nil {
			fmt.Fprintf(env.stderr, "hmo serve: daemon pid %d stopped\n", pid)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("daemon pid %d still running after %s", pid, stopWait)
}
