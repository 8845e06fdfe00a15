package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
)

func newGetCmd(env *env) *cobra.Command {
	var sf storeFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "get [flags] ID",
		Short: "show one record",
		Example: `  hmo get 42
  hmo get 42 --json`,
		RunE: func(cmd *cobra.Command, args []string) error { return runGet(cmd.Context(), env, &sf, asJSON, args) },
	}
	sf.register(cmd.Flags(), withOllama)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func runGet(ctx context.Context, env *env, sf *storeFlags, asJSON bool, args []string) (err error) {
	if len(args) != 1 {
		return usageError{"get needs one id"}
	}
	id, err := parseID(args[0])
	if err != nil {
		return err
	}
	var r engine.Record
	if c, _ := sf.runningDaemon(ctx, env); c != nil {
		defer c.Close()
		r, err = getDaemon(ctx, c, id)
	} else {
		var e *engine.Engine
		if e, err = sf.openRead(env); err != nil {
			return err
		}
		defer closeStore(e, &err)
		r, err = e.Get(id)
	}
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(env, r)
	}
	header := fmt.Sprintf("I0=%.1f n=%d P=%.3f tier=%d", r.Header.I0, r.Header.N, r.Header.P, r.Header.Tier)
	if r.Header.Tier == 0 {
		header = "(kept by the hmo daemon)"
	}
	fmt.Fprintf(env.stdout, "id:       %d\nscope:    %s\nsession:  %s\nrole:     %s\ntime:     %s\nsources:  %s\nheader:   %s\n\n%s\n",
		r.ID, r.Scope, r.Session, r.Role, r.Time.Format("2006-01-02 15:04:05 MST"), strings.Join(r.Sources, ","),
		header, r.Text)
	return nil
}

func parseID(s string) (uint64, error) {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return 0, usageError{fmt.Sprintf("bad id %q: want a positive integer", s)}
	}
	return id, nil
}

// getDaemon fetches a record through the daemon holding the store; the
// header stays in the daemon.
func getDaemon(ctx context.Context, svc api.Service, id uint64) (engine.Record, error) {
	resp, err := svc.Get(ctx, api.GetRequest{IDs: []uint64{id}})
	if err != nil {
		return engine.Record{}, err
	}
	if len(resp.Memories) == 0 {
		return engine.Record{}, fmt.Errorf("%w: record %d", engine.ErrNotFound, id)
	}
	return toRecord(&resp.Memories[0]), nil
}
