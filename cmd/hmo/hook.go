package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo/capture"
	"github.com/hmo-dev/hmo/hook"
	"github.com/hmo-dev/hmo/localllm/ollama"
)

// Hook time budget: the whole hook (hook.DefaultTimeout) bounds every
// call; these bound the waits that happen before a call can use it.
const (
	hookStartTimeout = 2 * time.Second        // wait for a daemon the hook started
	hookOpenTimeout  = 500 * time.Millisecond // wait for the store lock when opening directly
	hookStateDir     = "hook"                 // per-transcript ingestion state, under the store directory
)

func newHookCmd(env *env) *cobra.Command {
	var sf storeFlags
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "hook [flags] claude EVENT",
		Short: "agent hook: hmo hook claude <event> (always exits 0)",
		Long: `Run an agent hook: read the host's JSON payload on stdin, answer on stdout.
Events: ` + strings.Join(hook.Events, ", ") + `. It always exits 0: memory never blocks the agent, failures
are only reported on stderr.`,
		Example: `  hmo hook claude UserPromptSubmit < payload.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHook(cmd.Context(), env, &sf, timeout, args)
		},
	}
	sf.register(cmd.Flags(), withMode)
	cmd.Flags().DurationVar(&timeout, "timeout", hook.DefaultTimeout, "time budget of the whole hook")
	// A bad flag is reported, but the hook still exits 0.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		fmt.Fprintf(env.stderr, "hmo hook: %v\n", err)
		return exitError{0}
	})
	return cmd
}

// hookDistiller is the LLM facts step when a chat model is configured
// ($HMO_CHAT_MODEL), falling back to the offline distiller; nil (the
// offline one) otherwise.
func hookDistiller(env *env, sf *storeFlags) capture.Distiller {
	mm := sf.models.resolve(env)
	if mm.ChatModel == "" {
		return nil
	}
	co := mm.Ollama
	if mm.Host != "" {
		co.Host = mm.Host
	}
	c, err := ollama.New(&co)
	if err != nil {
		return nil
	}
	steps, err := ollama.NewSteps(c, &ollama.StepsOptions{Model: mm.ChatModel})
	if err != nil {
		return nil
	}
	return &capture.LLM{Step: steps, Fallback: capture.New()}
}

// runHook runs an agent hook. It always succeeds (exit 0): memory must
// never block the agent, so every failure is only reported on stderr.
func runHook(ctx context.Context, env *env, sf *storeFlags, timeout time.Duration, pos []string) error {
	if len(pos) != 2 || pos[0] != "claude" {
		fmt.Fprintf(env.stderr, "hmo hook: usage: hmo hook [flags] claude <%s>\n", strings.Join(hook.Events, "|"))
		return nil
	}
	c, dir, err := sf.connect(env, connectOptions{autostart: true, direct: true, shortLived: true, openTimeout: hookOpenTimeout, startTimeout: hookStartTimeout})
	if err != nil {
		fmt.Fprintf(env.stderr, "hmo hook: %v\n", err)
		return nil
	}
	defer c.Close()
	// The ingestion offsets belong to the store: a new or other store
	// ingests the transcripts afresh, and removing the store removes them.
	o := &hook.Options{Timeout: timeout, StateDir: filepath.Join(dir, hookStateDir), Distiller: hookDistiller(env, sf)}
	if err := hook.Claude(ctx, pos[1], env.stdin, env.stdout, c, o); err != nil {
		fmt.Fprintf(env.stderr, "hmo hook claude %s: %v\n", pos[1], err)
	}
	return nil
}
