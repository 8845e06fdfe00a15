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
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() { // owned by main; ends with the process
		sig := <-sigs
		cancel() // long operations stop at their next check
		code := 128 + int(sig.(syscall.Signal))
		select {
		case <-sigs: // a second signal: stop now
		case <-time.After(exitGrace.Load().(time.Duration)):
		}
		// Whatever is still running is cut here, as a crash would cut
		// it: every commit is atomic and the indexes catch up from the
		// change log at the next open, so the store stays consistent.
		fmt.Fprintf(os.Stderr, "hmo: stopped by %v; what was committed is kept\n", sig)
		os.Exit(code)
	}()
	code := run(ctx, &env{os.Stdin, os.Stdout, os.Stderr, os.Getenv}, os.Args[1:])
	signal.Stop(sigs)
	os.Exit(code)
}

// exitGrace is how long a command may take to return after SIGINT or
// SIGTERM before the process exits anyway: a second, so that every long
// operation (import, compact, reindex, an index build inside recall)
// honours a signal within it. The daemon sets a longer grace to finish
// the requests in flight.
var exitGrace atomic.Value

func init() { exitGrace.Store(time.Second) }

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
	lookup := func(name string) *pflag.Flag {
		if f := cmd.Flags().Lookup(name); f != nil {
			return f
		}
		return cmd.InheritedFlags().Lookup(name)
	}
	out := make([]string, len(args))
	copy(out, args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var f *pflag.Flag
		switch {
		case a[1] == '-':
			f = lookup(name)
		case len(name) == 1:
			f = cmd.Flags().ShorthandLookup(name)
			if f == nil {
				f = cmd.InheritedFlags().ShorthandLookup(name)
			}
		default:
			if f = lookup(name); f != nil {
				out[i] = "-" + a
			}
		}
		// The next argument is this flag's value, not a flag: leave it
		// as it is ("--stages -context" must not become "--context").
		if f != nil && !hasValue && f.NoOptDefVal == "" {
			i++
		}
	}
	return out
}
