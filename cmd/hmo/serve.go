package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/client"
	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/server"
	"github.com/hmo-dev/hmo/ui"
)

// daemonLog is the daemon's log file in the store directory.
const daemonLog = "serve.log"

// serveFlags are the flags of serve.
type serveFlags struct {
	store        storeFlags
	addr         string
	idle         time.Duration
	release      time.Duration
	detach, stop bool
	asJSON       bool
	logLevel     string
	logFormat    string
}

func newServeCmd(env *env) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "run the daemon: HTTP API on a socket and 127.0.0.1",
		Long: `Run the daemon that owns the store and serves the HTTP API on the Unix socket hmo.sock in
the store and on 127.0.0.1, behind the bearer token in the store's file "token".
hmo mcp and hmo hook start it on demand.`,
		Example: `  hmo serve                # in the foreground; Ctrl-C stops it
  hmo serve --detach --idle 10m
  hmo serve --stop`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runServe(cmd.Context(), env, cmd, &f) },
	}
	fs := cmd.Flags()
	f.store.register(fs, withMode|withChat)
	fs.StringVar(&f.addr, "addr", server.DefaultAddr, "loopback TCP address (port 0: any free port; '-': none)")
	fs.DurationVar(&f.idle, "idle", 0, "stop after this long without a request (0: never)")
	fs.DurationVar(&f.release, "release-after", server.DefaultRelease, "after this long without a request, give back the store pages the daemon mapped and its free heap (negative: never)")
	fs.BoolVar(&f.detach, "detach", false, "start the daemon in the background, logging to serve.log in the store, and return")
	fs.BoolVar(&f.asJSON, "json", false, "with --detach or --stop: print the result as JSON")
	fs.StringVar(&f.logLevel, "log-level", "", "log level: debug (every request), info, warn or error (default warn on a terminal, else info)")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&f.stop, "stop", false, "stop the daemon serving the store, and wait for it to exit")
	return cmd
}

func runServe(ctx context.Context, env *env, cmd *cobra.Command, f *serveFlags) (err error) {
	sf, addr, idle := &f.store, &f.addr, &f.idle
	dir, err := sf.path(env)
	if err != nil {
		return err
	}
	if f.detach {
		return detachServe(ctx, env, f, dir, cmd)
	}
	if f.stop {
		return stopServe(ctx, env, f)
	}
	m := engine.Mode(sf.mode)
	if m != engine.ModeFlat && m != engine.ModeTiered {
		return usageError{fmt.Sprintf("--mode %q: want flat or tiered", sf.mode)}
	}
	log, err := f.logger(env)
	if err != nil {
		return err
	}
	e, err := hmo.OpenWith(dir, &engine.Options{Mode: m, OpenTimeout: daemonOpenTimeout, Create: engine.CreateIfNew}, sf.models.resolve(env))
	if errors.Is(err, engine.ErrLocked) {
		return lostRace(ctx, env, sf, log, err)
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
	srv, err := server.New(svc, &server.Options{Dir: dir, Addr: *addr, Idle: *idle, Release: releaseAfter(f.release), UI: browser, Logger: log})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, srv.Close()) }()
	if _, err := srv.Start(); err != nil {
		return err
	}
	// On SIGTERM the daemon finishes the requests in flight and saves
	// the indexes: it gets longer than a command's second.
	exitGrace.Store(stopWait - 3*time.Second)
	log.Info("token", "file", filepath.Join(dir, server.TokenFile))
	select {
	case <-ctx.Done():
		log.Info("stopping", "reason", "signal")
	case <-srv.Done():
		log.Info("stopping", "reason", "idle", "idle", *idle)
	}
	return nil
}

// logger is the daemon's log on stderr (serve.log when detached): quiet
// (warnings and errors) on a terminal, info elsewhere, unless --log-level.
func (f *serveFlags) logger(env *env) (*slog.Logger, error) {
	var level slog.Level
	switch f.logLevel {
	case "":
		level = slog.LevelInfo
		if isTerminal(env.stderr) {
			level = slog.LevelWarn
		}
	case "debug", "info", "warn", "error":
		level.UnmarshalText([]byte(f.logLevel))
	default:
		return nil, usageError{fmt.Sprintf("--log-level %q: want debug, info, warn or error", f.logLevel)}
	}
	o := &slog.HandlerOptions{Level: level}
	switch f.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(env.stderr, o)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(env.stderr, o)), nil
	}
	return nil, usageError{fmt.Sprintf("--log-format %q: want text or json", f.logFormat)}
}

// lostRace handles a store held by another process: when that is a
// daemon, this one is not needed and exits cleanly.
func lostRace(ctx context.Context, env *env, sf *storeFlags, log *slog.Logger, err error) error {
	if _, pid := sf.runningDaemon(ctx, env); pid != 0 {
		log.Info("not needed: another daemon serves the store", "pid", pid)
		return nil
	}
	return err
}

// detachWait bounds the wait for a detached daemon to answer.
const detachWait = 15 * time.Second

// detached is what serve --detach reports.
type detached struct {
	PID     int    `json:"pid"`
	Started bool   `json:"started"` // false: a daemon already served the store
	Addr    string `json:"addr,omitempty"`
	Socket  string `json:"socket,omitempty"`
}

// detachServe launches "hmo serve" without --detach in a session of its
// own (adopted by init once this process exits) and returns when the
// daemon answers: serve.json written and health answered. When a daemon
// already serves the store it says so and gives that daemon's pid.
func detachServe(ctx context.Context, env *env, f *serveFlags, dir string, cmd *cobra.Command) error {
	if _, pid := f.store.runningDaemon(ctx, env); pid != 0 {
		return f.reportDetached(env, dir, pid, false)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	// The daemon gets the flags given, but --detach and --json, and the
	// store's path.
	args := []string{"serve", "--dir", dir}
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if fl.Name != "detach" && fl.Name != "dir" && fl.Name != "json" {
			args = append(args, "--"+fl.Name+"="+fl.Value.String())
		}
	})
	logPath := filepath.Join(dir, daemonLog)
	pid, err := client.Detach(exe, args, logPath)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(detachWait)
	for {
		if _, running := f.store.runningDaemon(ctx, env); running != 0 {
			// Another starter may have won the store's lock: report the
			// daemon that serves it.
			return f.reportDetached(env, dir, running, running == pid)
		}
		if exited(pid) {
			return fmt.Errorf("the daemon (pid %d) exited before it answered; its log %s ends:\n%s", pid, logPath, logTail(logPath, 1000))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the daemon (pid %d) did not answer within %s; see %s", pid, detachWait, logPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// reportDetached prints the pid of the daemon serving the store (on
// stdout, for scripts) and, on stderr, whether it was started now.
func (f *serveFlags) reportDetached(env *env, dir string, pid int, started bool) error {
	d := detached{PID: pid, Started: started}
	if info, err := server.ReadInfo(dir); err == nil && info.PID == pid {
		d.Addr, d.Socket = info.Addr, info.Socket
	}
	if f.asJSON {
		return writeJSON(env, d)
	}
	if started {
		fmt.Fprintf(env.stderr, "hmo serve: daemon pid %d serves %s on http://%s (log in %s)\n", pid, dir, d.Addr, filepath.Join(dir, daemonLog))
	} else {
		fmt.Fprintf(env.stderr, "hmo serve: daemon pid %d already serves %s\n", pid, dir)
	}
	fmt.Fprintf(env.stdout, "%d\n", pid)
	return nil
}

// logTail returns the last n bytes of the file at path.
func logTail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		f.Seek(fi.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// stopWait bounds the wait for a stopped daemon to exit.
const stopWait = 15 * time.Second

// stopServe asks the daemon serving the store to stop (SIGTERM) and waits
// until its process is gone. No daemon is not an error.
func stopServe(ctx context.Context, env *env, f *serveFlags) error {
	report := func(pid int, msg string) error {
		if f.asJSON {
			return writeJSON(env, struct {
				PID     int  `json:"pid,omitempty"`
				Stopped bool `json:"stopped"`
			}{pid, pid != 0})
		}
		fmt.Fprintln(env.stderr, msg)
		return nil
	}
	c, pid := f.store.runningDaemon(ctx, env)
	if c == nil {
		return report(0, "hmo serve: no daemon serves this store")
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
			return report(pid, fmt.Sprintf("hmo serve: daemon pid %d stopped", pid))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("daemon pid %d still running after %s", pid, stopWait)
}

// releaseAfter maps the --release-after flag to server.Options.Release,
// where 0 means the default: a flag of 0 releases at once when idle.
func releaseAfter(d time.Duration) time.Duration {
	if d == 0 {
		return time.Nanosecond
	}
	return d
}
