package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// forgetFlags are the flags of forget.
type forgetFlags struct {
	store  storeFlags
	purge  bool
	asJSON bool
}

func newForgetCmd(env *env) *cobra.Command {
	var f forgetFlags
	cmd := &cobra.Command{
		Use:   "forget [flags] ID...",
		Short: "delete records for good (--purge: and compact, so no byte stays on disk)",
		Long: `Delete records and their history for good. Unknown ids are an error and delete nothing.
With --purge the store and its indexes are then compacted, so that no byte of the
forgotten records stays on disk.`,
		Example: `  hmo forget 42 43
  hmo forget 9 --purge
  hmo forget 9 --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runForget(cmd.Context(), env, &f, args)
		},
	}
	fs := cmd.Flags()
	f.store.register(fs, withOllama)
	fs.BoolVar(&f.purge, "purge", false, "then compact the store and its indexes, so no byte of the forgotten records stays on disk (see 'hmo compact')")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as JSON: {forgotten: [ids], compacted}")
	return cmd
}

// forgetResult is what forget --json prints.
type forgetResult struct {
	Forgotten []uint64       `json:"forgotten"`
	Compacted *compactResult `json:"compacted,omitempty"` // with --purge
}

func runForget(ctx context.Context, env *env, f *forgetFlags, args []string) (err error) {
	if len(args) == 0 {
		return usageError{"forget needs at least one id"}
	}
	ids := make([]uint64, len(args))
	for i, a := range args {
		if ids[i], err = parseID(a); err != nil {
			return err
		}
	}
	if err := forget(ctx, &f.store, env, ids, f.purge); err != nil {
		return err
	}
	res := forgetResult{Forgotten: ids}
	if !f.asJSON {
		fmt.Fprintf(env.stdout, "forgot %d record(s)\n", len(ids))
	}
	if f.purge {
		c, err := compactStore(env, &f.store)
		if err != nil {
			return err
		}
		res.Compacted = &c
		if !f.asJSON {
			c.print(env)
		}
	}
	if f.asJSON {
		return writeJSON(env, res)
	}
	return nil
}

// forget deletes the records and, with purge, compacts the indexes
// before the store closes.
func forget(ctx context.Context, sf *storeFlags, env *env, ids []uint64, purge bool) (err error) {
	e, err := sf.openExisting(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	if err := e.Forget(ctx, ids...); err != nil {
		return err
	}
	if purge {
		return e.CompactIndexes(ctx)
	}
	return nil
}
