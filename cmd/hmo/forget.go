package main

import (
	"context"
	"fmt"
)

func runForget(ctx context.Context, env *env, args []string) (err error) {
	fs := newFlags(env, "forget", "ID...")
	var sf storeFlags
	sf.register(fs)
	purge := fs.Bool("purge", false, "then compact the store and its indexes, so no byte of the forgotten records stays on disk (see 'hmo compact')")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError{"forget needs at least one id"}
	}
	ids := make([]uint64, fs.NArg())
	for i, a := range fs.Args() {
		if ids[i], err = parseID(a); err != nil {
			return err
		}
	}
	if err := forget(ctx, env, &sf, ids, *purge); err != nil {
		return err
	}
	if *purge {
		return compactStore(env, &sf)
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
