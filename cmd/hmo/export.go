package main

import (
	"bufio"
	"context"
	"os"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/jsonl"
)

func runExport(ctx context.Context, env *env, args []string) (err error) {
	fs := newFlags(env, "export", "")
	var sf storeFlags
	sf.register(fs)
	out := fs.String("out", "", "write to this file (0600) instead of stdout")
	if err := parse(fs, args); err != nil {
		return err
	}
	e, err := sf.openExisting(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	w := env.stdout
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
		w = f
	}
	bw := bufio.NewWriter(w)
	jw := jsonl.NewWriter(bw)
	if err := e.Scan(func(r *engine.Record) error { return jw.Write(r) }); err != nil {
		return err
	}
	return bw.Flush()
}
