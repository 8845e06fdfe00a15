package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo"
	"github.com/hmo-dev/hmo/engine"
)

func newSalvageCmd(env *env) *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "salvage [flags] NEWDIR",
		Short: "copy every readable record of a damaged store into a new store",
		Long: "Copy every record that can still be read from the store (--dir), which may be damaged, into a new store in NEWDIR, " +
			"in order; older versions replaced by an update are left out. The damaged store is only read.",
		Example: `  hmo doctor                      # says the store file is damaged
  hmo salvage ~/hmo-salvaged      # copy what can be read
  hmo stats --dir ~/hmo-salvaged`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSalvage(cmd.Context(), env, &sf, args[0]) },
	}
	sf.register(cmd.Flags(), 0)
	return cmd
}

func runSalvage(ctx context.Context, env *env, sf *storeFlags, dst string) (err error) {
	src, err := sf.path(env)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dst, engine.DBFile)); err == nil {
		return usageError{fmt.Sprintf("%s already holds a store: salvage into a new directory", dst)}
	}
	// The new store uses the old one's embedder when its identity can be
	// read; else the default.
	var m hmo.Models
	if id, err := engine.ReadIdentity(src, time.Second); err == nil {
		m.Embedder = reindexSpec(id.Embedder)
	} else if errors.Is(err, engine.ErrNotFound) || errors.Is(err, engine.ErrLocked) {
		return err
	}
	e, err := hmo.OpenWith(dst, &engine.Options{Create: engine.CreateAlways}, &m)
	if err != nil {
		return fmt.Errorf("new store: %w", err)
	}
	defer closeStore(e, &err)
	rep, err := engine.Salvage(ctx, src, e, nil)
	for _, p := range rep.Problems {
		fmt.Fprintf(env.stderr, "hmo salvage: %s\n", p)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "salvaged %d record(s) into %s; %d unreadable, %d older version(s) left out\n", rep.Copied, dst, rep.Unreadable, rep.History)
	if rep.Recovered > 0 {
		fmt.Fprintf(env.stdout, "%d of them read from their own pages: the pages that index them are damaged\n", rep.Recovered)
	}
	return nil
}
