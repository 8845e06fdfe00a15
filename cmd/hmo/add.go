package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
)

// addFlags are the flags of add.
type addFlags struct {
	store  storeFlags
	in     engine.Input
	at     string
	key    string
	asJSON bool
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
	f.store.register(fs, withChat|withEmbedder|withEnrichWait|withCreate)
	fs.StringVar(&f.in.Scope, "scope", "", "scope (user, agent or project namespace)")
	fs.StringVar(&f.in.Session, "session", "", "session id")
	fs.StringVar(&f.in.Role, "role", "", "role or speaker")
	fs.BoolVar(&f.asJSON, "json", false, "print the new record's id as JSON: {\"id\": N}")
	fs.StringVar(&f.at, "time", "", "event time, RFC 3339 or date (default now)")
	fs.StringVar(&f.key, "idempotency-key", "", "a unique key for this write: a retry with the same key stores nothing again")
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
	if err := checkText(in.Text); err != nil {
		return err
	}
	if c, _ := sf.runningDaemon(ctx, env); c != nil {
		defer c.Close()
		resp, err := c.Add(ctx, api.AddRequest{IdempotencyKey: f.key, Memories: []api.NewMemory{{
			Text: in.Text, Scope: in.Scope, Session: in.Session, Role: in.Role, Time: in.Time,
		}}})
		if err != nil {
			return err
		}
		return f.print(env, resp.IDs[0], len(resp.Duplicates) > 0)
	}
	e, err := sf.open(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	if err := e.Validate(&in); err != nil {
		return err
	}
	out, err := e.RememberBatch(ctx, engine.Batch{Inputs: []engine.Input{in}, Key: f.key})
	if err != nil && len(out) == 0 {
		return err
	}
	if err != nil {
		// Committed, then an index update failed (a full disk): the
		// record is stored and the indexes catch up at the next open.
		// Failing here would make a retry store it twice.
		fmt.Fprintf(env.stderr, "hmo add: warning: stored as %d, but %s\n", out[0].ID, strings.TrimPrefix(err.Error(), "hmo: "))
	}
	defer sf.models.settle(ctx, env, e)
	return f.print(env, out[0].ID, out[0].Duplicate)
}

// print prints the record's id; for a text already stored it says so on
// stderr ("already stored: id N"), so that stdout is the id either way.
func (f *addFlags) print(env *env, id uint64, duplicate bool) error {
	if duplicate {
		fmt.Fprintf(env.stderr, "already stored: id %d\n", id)
	}
	if f.asJSON {
		return writeJSON(env, struct {
			ID        uint64 `json:"id"`
			Duplicate bool   `json:"duplicate,omitempty"`
		}{id, duplicate})
	}
	_, err := fmt.Fprintln(env.stdout, id)
	return err
}

// checkText refuses, before any store is reached, text that no store
// takes: empty, not UTF-8 or over the size limit, naming its real size.
func checkText(text string) error {
	switch {
	case len(text) > engine.DefaultMaxTextBytes:
		return fmt.Errorf("%w: text is %s, limit %d bytes", engine.ErrTooLarge, byteSize(len(text)), engine.DefaultMaxTextBytes)
	case strings.TrimSpace(text) == "":
		return engine.ErrEmptyText
	case !utf8.ValidString(text):
		return engine.ErrInvalidUTF8
	}
	return nil
}

// byteSize is n bytes for a message: "70000 bytes", "10485760 bytes (10.0 MiB)".
func byteSize(n int) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d bytes (%.1f MiB)", n, float64(n)/(1<<20))
}

// maxStdinCount bounds how far stdin is read past the text limit to tell
// its size.
const maxStdinCount = 1 << 30

// textArg joins the arguments, or reads stdin when the only one is "-"
// (without the line ending that echo and editors leave at the end).
func textArg(env *env, args []string) (string, error) {
	if len(args) != 1 || args[0] != "-" {
		return strings.Join(args, " "), nil
	}
	b, err := io.ReadAll(io.LimitReader(env.stdin, engine.DefaultMaxTextBytes+1))
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	if len(b) > engine.DefaultMaxTextBytes {
		// Too large: count the rest, so the message gives the real size.
		n, err := io.Copy(io.Discard, io.LimitReader(env.stdin, maxStdinCount))
		if err != nil {
			return "", fmt.Errorf("read stdin: %w", err)
		}
		if n == maxStdinCount {
			return "", fmt.Errorf("%w: stdin holds more than %s, limit %d bytes", engine.ErrTooLarge, byteSize(maxStdinCount), engine.DefaultMaxTextBytes)
		}
		return "", fmt.Errorf("%w: text is %s, limit %d bytes", engine.ErrTooLarge, byteSize(len(b)+int(n)), engine.DefaultMaxTextBytes)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}
