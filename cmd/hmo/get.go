package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

func runGet(ctx context.Context, env *env, args []string) (err error) {
	fs := newFlags(env, "get", "ID")
	var sf storeFlags
	sf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"get needs one id"}
	}
	id, err := parseID(fs.Arg(0))
	if err != nil {
		return err
	}
	e, err := sf.openExisting(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	r, err := e.Get(id)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env, r)
	}
	fmt.Fprintf(env.stdout, "id:       %d\nscope:    %s\nsession:  %s\nrole:     %s\ntime:     %s\nsources:  %s\nheader:   I0=%.1f n=%d P=%.3f tier=%d\n\n%s\n",
		r.ID, r.Scope, r.Session, r.Role, r.Time.Format("2006-01-02 15:04:05 MST"), strings.Join(r.Sources, ","),
		r.Header.I0, r.Header.N, r.Header.P, r.Header.Tier, r.Text)
	return nil
}

func parseID(s string) (uint64, error) {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return 0, usageError{fmt.Sprintf("bad id %q: want a positive integer", s)}
	}
	return id, nil
}
