package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
)

func runAdd(ctx context.Context, env *env, args []string) (err error) {
	fs := newFlags(env, "add", "TEXT... (or - to read stdin)")
	var sf storeFlags
	sf.register(fs)
	var in engine.Input
	var at, key string
	fs.StringVar(&in.Scope, "scope", "", "scope (user, agent or project namespace)")
	fs.StringVar(&in.Session, "session", "", "session id")
	fs.StringVar(&in.Role, "role", "", "role or speaker")
	fs.StringVar(&at, "time", "", "event time, RFC 3339 or date (default now)")
	fs.StringVar(&key, "idempotency-key", "", "a unique key for this write: a retry with the same key stores nothing again")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError{"add needs text (or - for stdin)"}
	}
	if in.Time, err = parseTime(at); err != nil {
		return err
	}
	if in.Text, err = textArg(env, fs.Args()); err != nil {
		return err
	}
	if c, _ := sf.runningDaemon(ctx, env); c != nil {
		defer c.Close()
		resp, err := c.Add(ctx, api.AddRequest{IdempotencyKey: key, Memories: []api.NewMemory{{
			Text: in.Text, Scope: in.Scope, Session: in.Session, Role: in.Role, Time: in.Time,
		}}})
		if err != nil {
			return err
		}
		printAdded(env, resp.IDs[0], len(resp.Duplicates) > 0)
		return nil
	}
	e, err := sf.open(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	out, err := e.RememberBatch(ctx, engine.Batch{Inputs: []engine.Input{in}, Key: key})
	if err != nil {
		return err
	}
	printAdded(env, out[0].ID, out[0].Duplicate)
	sf.models.settle(ctx, env, e)
	return nil
}

// printAdded prints the new id, or says the text was already stored (on
// stderr, so that stdout is the id either way).
func printAdded(env *env, id uint64, duplicate bool) {
	fmt.Fprintln(env.stdout, id)
	if duplicate {
		fmt.Fprintf(env.stderr, "already stored: id %d\n", id)
	}
}

// textArg joins the arguments, or reads stdin when the only one is "-"
// (without the line ending that echo and editors leave at the end).
func textArg(env *env, args []string) (string, error) {
	if len(args) == 1 && args[0] == "-" {
		b, err := io.ReadAll(io.LimitReader(env.stdin, engine.DefaultMaxTextBytes+1))
		return strings.TrimRight(string(b), "\r\n"), err
	}
	return strings.Join(args, " "), nil
}
