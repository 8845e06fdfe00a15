package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo/engine"
)

// uiFlags are the flags of ui.
type uiFlags struct {
	store  storeFlags
	noOpen bool
	asJSON bool
}

func newUICmd(env *env) *cobra.Command {
	var f uiFlags
	cmd := &cobra.Command{
		Use:   "ui [flags]",
		Short: "open the memory browser: a page served by the daemon on 127.0.0.1",
		Long: `Open the memory browser: the timeline by scope and session, search with scores and
tiers, a record's history, edit and forget, the persona and the tier statistics, on a
page the daemon serves on 127.0.0.1. hmo ui starts the daemon if needed and opens a
one-time login link with $BROWSER or the system's opener, or prints it.`,
		Example: `  hmo ui
  hmo ui --no-open          # print the link (it works once, for a minute)
  hmo ui --dir ~/notes-store --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runUI(cmd.Context(), env, &f) },
	}
	fs := cmd.Flags()
	f.store.register(fs, withMode)
	fs.BoolVar(&f.noOpen, "no-open", false, "print the login link instead of opening a browser")
	fs.BoolVar(&f.asJSON, "json", false, "print the login link and its expiry as JSON (opens nothing)")
	return cmd
}

// runUI makes sure the daemon runs, asks it for a one-time login link
// into the memory browser and opens it in the browser, or prints it.
func runUI(ctx context.Context, env *env, f *uiFlags) error {
	dir, err := f.store.path(env)
	if err != nil {
		return err
	}
	// A browser over an empty store behind a mistyped path helps nobody.
	if _, err := os.Stat(filepath.Join(dir, engine.DBFile)); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no store in %s (create one with 'hmo init --dir %s')", dir, dir)
	}
	c, _, err := f.store.connect(env, connectOptions{autostart: true})
	if err != nil {
		return err
	}
	defer c.Close()
	login, err := c.UILogin(ctx)
	if errors.Is(err, engine.ErrNotFound) {
		return errors.New("the running daemon serves no memory browser (started by an older hmo?): stop it with 'hmo serve --stop' and run 'hmo ui' again")
	}
	if err != nil {
		return err
	}
	if f.asJSON {
		return writeJSON(env, login)
	}
	ttl := time.Until(login.Expires).Round(time.Second)
	switch {
	case f.noOpen:
		fmt.Fprintf(env.stderr, "Open this link in a browser on this machine (it works once, for %s):\n", ttl)
	default:
		if err := openBrowser(env, login.URL); err != nil {
			fmt.Fprintf(env.stderr, "No browser to open (%v). Open this link in a browser on this machine (it works once, for %s):\n", err, ttl)
		} else {
			fmt.Fprintf(env.stderr, "Opened the memory browser. If no page appeared, open this link (it works once, for %s):\n", ttl)
		}
	}
	fmt.Fprintln(env.stdout, login.URL)
	return nil
}

// openerWait is how long openBrowser waits for the opener to report a
// failure; openers that keep running (a browser in the foreground) are
// left to run.
const openerWait = 3 * time.Second

// openBrowser opens url with $BROWSER (a command; "%s" in it stands for
// the link), else the system's opener: xdg-open where a display is set,
// open on macOS, the URL handler on Windows.
func openBrowser(env *env, url string) error {
	var argv []string
	if b := strings.TrimSpace(strings.Split(env.getenv("BROWSER"), ":")[0]); b != "" {
		argv = strings.Fields(b)
		if strings.Contains(b, "%s") {
			for i := range argv {
				argv[i] = strings.ReplaceAll(argv[i], "%s", url)
			}
		} else {
			argv = append(argv, url)
		}
	} else {
		switch runtime.GOOS {
		case "darwin":
			argv = []string{"open", url}
		case "windows":
			argv = []string{"rundll32", "url.dll,FileProtocolHandler", url}
		default:
			if env.getenv("DISPLAY") == "" && env.getenv("WAYLAND_DISPLAY") == "" {
				return errors.New("no display: $DISPLAY and $WAYLAND_DISPLAY are unset, and $BROWSER too")
			}
			argv = []string{"xdg-open", url}
		}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	cmd := exec.Command(path, argv[1:]...)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }() // ends with the opener
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s: %w", argv[0], err)
		}
	case <-time.After(openerWait):
	}
	return nil
}
