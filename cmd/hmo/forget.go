package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

func newForgetCmd(env *env) *cobra.Command {
	var sf storeFlags
	var purge bool
	cmd := &cobra.Command{
		Use:   "forget [flags] ID...",
		Short: "delete records for good (--purge: and compact, so no byte stays on disk)",
		Example: `  hmo forget 42 43
  hmo forget 9 --purge`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runForget(cmd.Context(), env, &sf, purge, args)
		},
	}
	sf.register(cmd.Flags(), withOllama)
	cmd.Flags().BoolVar(&purge, "purge", false, "then compact the store and its indexes, so no byte of the forgotten records stays on disk (see 'hmo compact')")
	return cmd
}

func runForget(ctx context.Context, env *env, sf *storeFlags, purge bool, args []string) (err error) {
	if len(args) == 0 {
		return usageError{"forget needs at least one id"}
	}
	ids := make([]uint64, len(args))
	for i, a := range args {
		if ids[i], err = parseID(a); err != nil {
			return err
		}
	}
	if err := forget(ctx, env, sf, ids, purge); err != nil {
		return err
	}
	if purge {
		return compactStore(env, sf)
	}
	return nil
}

// forget deletes the records and, with purge, compacts the indexes
// before the store closes.
func forget(ctx context.Context, env *env, sf *storeFlags, ids []uint64, purge bool) (err error) {
	e, err := sf.openExisting(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	if err := e.Forget(ctx, ids...); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "forgot %d record(s)\n", len(ids))
	if purge {
		return e.CompactIndexes(ctx)
	}
	return nil
}
