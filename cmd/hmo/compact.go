package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo/engine"
)

// compactLockWait bounds the wait for the store's lock when compacting.
const compactLockWait = 5 * time.Second

// runCompact removes what deleted records left in the files: freed bbolt
// pages, deleted documents in Bleve's segments, tombstoned vectors.
func newCompactCmd(env *env) *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:     "compact [flags]",
		Short:   "rewrite the store and its indexes without what deleted records left in the files",
		Example: "  hmo compact --dir ~/notes-store",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := compactIndexes(cmd.Context(), env, &sf); err != nil {
				return err
			}
			return compactStore(env, &sf)
		},
	}
	sf.register(cmd.Flags(), withOllama)
	return cmd
}

func compactIndexes(ctx context.Context, env *env, sf *storeFlags) (err error) {
	e, err := sf.openExisting(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	return e.CompactIndexes(ctx)
}

// compactStore rewrites the closed store's bbolt file with its live data.
func compactStore(env *env, sf *storeFlags) error {
	dir, err := sf.path(env)
	if err != nil {
		return err
	}
	before := engine.DiskBytes(dir)
	if err := engine.CompactStore(dir, compactLockWait); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "compacted %s: %.1f MiB -> %.1f MiB\n", dir, float64(before)/(1<<20), float64(engine.DiskBytes(dir))/(1<<20))
	return nil
}
