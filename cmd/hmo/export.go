package main

import (
	"bufio"
	"context"
	"os"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/jsonl"
	"github.com/hmo-dev/hmo/markdown"
)

func runExport(ctx context.Context, env *env, args []string) (err error) {
	fs := newFlags(env, "export", "")
	var sf storeFlags
	sf.register(fs)
	out := fs.String("out", "", "write to this file (0600) instead of stdout")
	format := fs.String("format", "jsonl", "jsonl (every field; import reads it back identically) or markdown (by scope and day, for reading and for agents' memory files)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *format != "jsonl" && *format != "markdown" && *format != "md" {
		return usageError{"--format " + *format + ": want jsonl or markdown"}
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
	if *format == "jsonl" {
		jw := jsonl.NewWriter(bw)
		if err := e.Scan(func(r *engine.Record) error { return jw.Write(r) }); err != nil {
			return err
		}
		return bw.Flush()
	}
	var recs []engine.Record
	if err := e.Scan(func(r *engine.Record) error {
		recs = append(recs, engine.Record{ID: r.ID, Scope: r.Scope, Time: r.Time, Text: r.Text})
		return nil
	}); err != nil {
		return err
	}
	if err := markdown.Write(bw, recs); err != nil {
		return err
	}
	return bw.Flush()
}
