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
	var at string
	fs.StringVar(&in.Scope, "scope", "", "scope (user, agent or project namespace)")
	fs.StringVar(&in.Session, "session", "", "session id")
	fs.StringVar(&in.Role, "role", "", "role or speaker")
	fs.StringVar(&at, "time", "", "event time, RFC 3339 or date (default now)")
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
		resp, err := c.Add(ctx, api.AddRequest{Memories: []api.NewMemory{{
			Text: in.Text, Scope: in.Scope, Session: in.Session, Role: in.Role, Time: in.Time,
		}}})
		if err != nil {
			return err
		}
		fmt.Fprintln(env.stdout, resp.IDs[0])
		return nil
	}
	e, err := sf.open(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	ids, err := e.Remember(ctx, in)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.stdout, ids[0])
	sf.models.settle(ctx, env, e)
	return nil
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
