package main

import (
	"context"
	"fmt"
)

func runInit(ctx context.Context, env *env, args []string) (err error) {
	fs := newFlags(env, "init", "")
	var sf storeFlags
	sf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"init takes no arguments"}
	}
	e, err := sf.open(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	fmt.Fprintf(env.stdout, "store ready in %s\n", e.Dir())
	return nil
}
