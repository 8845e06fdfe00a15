package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
)

// listFlags are the flags of list.
type listFlags struct {
	store  storeFlags
	filter filterFlags
	req    api.ListRequest
	role   string
	asJSON bool
}

func newListCmd(env *env) *cobra.Command {
	var f listFlags
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "show the timeline of records, filtered and paged",
		Long: fmt.Sprintf(`Show current records in time order (id, time, scope, session, role: text), oldest
first or, with --reverse, newest first. A page holds --limit records (at most %d);
when more follow, the command to see the next page is printed on stderr (--json:
next_cursor). Superseded versions are not listed: 'hmo get' shows a record.`, api.MaxListSize),
		Example: `  hmo list
  hmo list --scope me --reverse --limit 10
  hmo list --session s3 --role user --from 2024-06-01 --to 2024-07-01
  hmo list --json --cursor <next_cursor of the previous page>`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runList(cmd.Context(), env, &f) },
	}
	fs := cmd.Flags()
	f.store.register(fs, withOllama)
	f.filter.register(fs)
	fs.StringVar(&f.role, "role", "", "only this role or speaker")
	fs.IntVarP(&f.req.Limit, "limit", "n", api.DefaultListSize, fmt.Sprintf("records per page, 1 to %d", api.MaxListSize))
	fs.BoolVarP(&f.req.Reverse, "reverse", "r", false, "newest first")
	fs.StringVar(&f.req.Cursor, "cursor", "", "continue after the previous page (its next_cursor)")
	fs.BoolVar(&f.asJSON, "json", false, "print the page as JSON: {memories, next_cursor}")
	return cmd
}

func runList(ctx context.Context, env *env, f *listFlags) (err error) {
	req := f.req
	if req.Limit < 1 || req.Limit > api.MaxListSize {
		return usageError{fmt.Sprintf("--limit %d: want 1 to %d", req.Limit, api.MaxListSize)}
	}
	if req.Filter, err = f.filter.filter(); err != nil {
		return err
	}
	var svc api.Service
	if c, _ := f.store.runningDaemon(ctx, env); c != nil {
		defer c.Close()
		svc = c
	} else {
		e, err := f.store.openExisting(env)
		if err != nil {
			return err
		}
		defer closeStore(e, &err)
		svc = api.NewLocal(e)
	}
	page, err := listPage(ctx, svc, req, f.role)
	if errors.Is(err, api.ErrInvalid) || errors.Is(err, api.ErrBadCursor) || errors.Is(err, engine.ErrInvalidQuery) {
		return usageError{err.Error()} // an empty time range, a cursor of another listing
	}
	if err != nil {
		return err
	}
	if f.asJSON {
		return writeJSON(env, page)
	}
	for _, m := range page.Memories {
		fmt.Fprintf(env.stdout, "%d\t%s\t%s\t%s\t%s\n", m.ID, m.Time.Format("2006-01-02 15:04"), m.Scope, m.Session, oneLine(m.Role, m.Text))
	}
	if page.NextCursor != "" {
		fmt.Fprintf(env.stderr, "more: %s --cursor %s\n", f.command(), page.NextCursor)
	}
	return nil
}

// listPage fetches one page of req.Limit records of the role (any when
// empty). The API filters by scope, session and time; the role is
// filtered here, asking each time for no more records than are missing,
// so that the page's cursor never skips one.
func listPage(ctx context.Context, svc api.Service, req api.ListRequest, role string) (api.ListResponse, error) {
	if role == "" {
		return svc.List(ctx, req)
	}
	out := api.ListResponse{Memories: []api.Memory{}}
	want := req.Limit
	for {
		req.Limit = want - len(out.Memories)
		page, err := svc.List(ctx, req)
		if err != nil {
			return api.ListResponse{}, err
		}
		for _, m := range page.Memories {
			if m.Role == role {
				out.Memories = append(out.Memories, m)
			}
		}
		out.Truncated = out.Truncated || page.Truncated
		out.NextCursor = page.NextCursor
		if page.NextCursor == "" || len(out.Memories) == want {
			return out, nil
		}
		req.Cursor = page.NextCursor
	}
}

// command is the list command line that shows the next page: the same
// filters, without the cursor.
func (f *listFlags) command() string {
	parts := []string{"hmo list"}
	add := func(flag, v string) {
		if v != "" {
			parts = append(parts, flag, shellQuote(v))
		}
	}
	add("--dir", f.store.dir)
	add("--scope", f.filter.scope)
	add("--session", f.filter.session)
	add("--role", f.role)
	add("--from", f.filter.from)
	add("--to", f.filter.to)
	if f.req.Limit != api.DefaultListSize {
		add("--limit", fmt.Sprint(f.req.Limit))
	}
	if f.req.Reverse {
		parts = append(parts, "--reverse")
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:+@=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
