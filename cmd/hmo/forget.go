package main

import (
	"context"
	"fmt"
)

func runForget(ctx context.Context, env *env, args []string) (err error) {
	fs := newFlags(env, "forget", "ID...")
	var sf storeFlags
	sf.register(fs)
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
	e, err := sf.openExisting(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	if err := e.Forget(ctx, ids...); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "forgot %d record(s)\n", len(ids))
	return nil
}
