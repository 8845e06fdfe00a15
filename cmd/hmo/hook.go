package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hmo-dev/hmo/hook"
)

// Hook time budget: the whole hook (hook.DefaultTimeout) bounds every
// call; these bound the waits that happen before a call can use it.
const (
	hookStartTimeout = 2 * time.Second        // wait for a daemon the hook started
	hookOpenTimeout  = 500 * time.Millisecond // wait for the store lock when opening directly
	hookStateDir     = "hook"                 // per-transcript ingestion state, under the store directory
)

// runHook runs an agent hook. It always succeeds (exit 0): memory must
// never block the agent, so every failure is only reported on stderr.
func runHook(ctx context.Context, env *env, args []string) error {
	fs := newFlags(env, "hook", "claude EVENT")
	var sf storeFlags
	sf.register(fs)
	timeout := fs.Duration("timeout", hook.DefaultTimeout, "time budget of the whole hook")
	// Flags may come before or after "claude EVENT".
	var pos []string
	if len(args) >= 2 && !strings.HasPrefix(args[0], "-") {
		pos, args = args[:2], args[2:]
	}
	if err := parse(fs, args); err != nil {
		fmt.Fprintf(env.stderr, "hmo hook: %v\n", err)
		return nil
	}
	pos = append(pos, fs.Args()...)
	if len(pos) != 2 || pos[0] != "claude" {
		fmt.Fprintf(env.stderr, "hmo hook: usage: hmo hook [flags] claude <%s>\n", strings.Join(hook.Events, "|"))
		return nil
	}
	c, dir, err := sf.connect(env, connectOptions{autostart: true, direct: true, openTimeout: hookOpenTimeout, startTimeout: hookStartTimeout})
	if err != nil {
		fmt.Fprintf(env.stderr, "hmo hook: %v\n", err)
		return nil
	}
	defer c.Close()
	// The ingestion offsets belong to the store: a new or other store
	// ingests the transcripts afresh, and removing the store removes them.
	o := &hook.Options{Timeout: *timeout, StateDir: filepath.Join(dir, hookStateDir)}
	if err := hook.Claude(ctx, pos[1], env.stdin, env.stdout, c, o); err != nil {
		fmt.Fprintf(env.stderr, "hmo hook claude %s: %v\n", pos[1], err)
	}
	return nil
}
