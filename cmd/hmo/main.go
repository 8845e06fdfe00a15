// Command hmo is a long-term memory engine for LLM agents that runs on the
// user's own device. Run "hmo help" for the subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

var commands = map[string]command{
	"init":    {"create a store", runInit},
	"add":     {"remember one record", runAdd},
	"import":  {"import records (jsonl, locomo, claude-code, markdown)", runImport},
	"recall":  {"search memory", runRecall},
	"get":     {"show one record", runGet},
	"forget":  {"delete records for good (--purge: and compact, so no byte stays on disk)", runForget},
	"compact": {"rewrite the store and its indexes without what deleted records left in the files", runCompact},
	"stats":   {"describe the store", runStats},
	"persona": {"show the persona profile and drift", runPersona},
	"export":  {"write every record as JSONL or Markdown", runExport},
	"eval":    {"measure retrieval on a benchmark (locomo)", runEval},
	"version": {"print the version", runVersion},
	"reindex": {"re-embed every record with another embedder", runReindex},
	"doctor":  {"check the store and the local models", runDoctor},
	"serve":   {"run the daemon: HTTP API on a socket and 127.0.0.1", runServe},
	"mcp":     {"MCP server on stdio (or streamable HTTP)", runMCP},
	"hook":    {"agent hook: hmo hook claude <event> (always exits 0)", runHook},
	"ui":      {"open the memory browser: a page served by the daemon on 127.0.0.1", runUIFlags},
}

// env is what a subcommand may touch of the process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// usageError is a bad command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &env{os.Stdin, os.Stdout, os.Stderr, os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, env *env, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "hmo: unknown command %q\n", args[0])
		usage(env.stderr)
		return 2
	}
	err := cmd.run(ctx, env, args[1:])
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)):
		fmt.Fprintf(env.stderr, "hmo %s: %v\n", args[0], err)
		return 2
	default:
		fmt.Fprintf(env.stderr, "hmo %s: %v\n", args[0], err)
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: hmo <command> [flags] [args]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'hmo <command> -h' for a command's flags. The store is in --dir, $HMO_DIR or the user's data directory.")
}
