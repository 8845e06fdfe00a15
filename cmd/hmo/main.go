// Command hmo is a long-term memory engine for LLM agents that runs on the
// user's own device. Run "hmo help" for the subcommands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// env is what a subcommand may touch of the process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// usageError is a bad command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// exitError ends the command with an exit status, its message (if any)
// already printed.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &env{os.Stdin, os.Stdout, os.Stderr, os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run runs the command line args and returns the exit status: 0 on
// success, 1 on an error, 2 on a bad command line.
func run(ctx context.Context, env *env, args []string) int {
	root := newRoot(env)
	root.SetArgs(goStyleFlags(root, args))
	cmd, err := root.ExecuteContextC(ctx)
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, new(usageError)):
		fmt.Fprintf(env.stderr, "%s: %s\n", commandName(cmd), message(err))
		if cmd != nil {
			fmt.Fprintf(env.stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
		return 2
	default:
		fmt.Fprintf(env.stderr, "%s: %s\n", commandName(cmd), message(err))
		return 1
	}
}

// commandName names cmd in messages: "hmo add", "hmo eval locomo", or
// "hmo".
func commandName(cmd *cobra.Command) string {
	if cmd == nil {
		return "hmo"
	}
	return cmd.CommandPath()
}

// message is err's text with one prefix: the command's. The packages'
// sentinel errors start with "hmo: ", which the command's name already
// says.
func message(err error) string {
	msg := strings.TrimPrefix(err.Error(), "hmo: ")
	return strings.ReplaceAll(msg, ": hmo: ", ": ")
}

// goStyleFlags accepts the single-dash long flags of Go's flag package
// (-dir, -json=true) that earlier versions took, by rewriting them to
// --dir, --json=true when the command has a flag of that name.
func goStyleFlags(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil {
		return args
	}
	out := make([]string, len(args))
	copy(out, args)
	for i, a := range out {
		if a == "--" {
			break
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' {
			continue
		}
		name, _, _ := strings.Cut(a[1:], "=")
		if len(name) > 1 && (cmd.Flags().Lookup(name) != nil || cmd.InheritedFlags().Lookup(name) != nil) {
			out[i] = "-" + a
		}
	}
	return out
}
