package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
)

// addFlags are the flags of add.
type addFlags struct {
	store storeFlags
	in    engine.Input
	at    string
}

func newAddCmd(env *env) *cobra.Command {
	var f addFlags
	cmd := &cobra.Command{
		Use:   "add [flags] TEXT... | -",
		Short: "remember one record",
		Long:  "Remember one record: the arguments joined by spaces, or stdin when the only argument is -.",
		Example: `  hmo add "I'm allergic to shellfish" --scope me --role user
  echo "long text..." | hmo add - --scope me --session s1
  hmo add "Flight to Porto on the 3rd" --time 2024-05-01`,
		RunE: func(cmd *cobra.Command, args []string) error { return runAdd(cmd.Context(), env, &f, args) },
	}
	fs := cmd.Flags()
	f.store.register(fs, withChat|withEmbedder|withEnrichWait)
	fs.StringVar(&f.in.Scope, "scope", "", "scope (user, agent or project namespace)")
	fs.StringVar(&f.in.Session, "session", "", "session id")
	fs.StringVar(&f.in.Role, "role", "", "role or speaker")
	fs.StringVar(&f.at, "time", "", "event time, RFC 3339 or date (default now)")
	return cmd
}

func runAdd(ctx context.Context, env *env, f *addFlags, args []string) (err error) {
	sf, in := &f.store, f.in
	if len(args) == 0 {
		return usageError{"add needs text (or - for stdin)"}
	}
	if in.Time, err = parseTime(f.at); err != nil {
		return err
	}
	if in.Text, err = textArg(env, args); err != nil {
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
