package main

import (
	"context"
	"fmt"
)

func runStats(ctx context.Context, env *env, args []string) (err error) {
	fs := newFlags(env, "stats", "")
	var sf storeFlags
	sf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	e, err := sf.openExisting(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	s, err := e.Stats()
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env, s)
	}
	fmt.Fprintf(env.stdout, "store:      %s (schema %d, %.1f MiB on disk)\n", s.Dir, s.Schema, float64(s.DiskBytes)/(1<<20))
	fmt.Fprintf(env.stdout, "embedder:   %s (%d dims; indexes %s)\n", s.Embedder, s.Dims, s.IndexLayout)
	fmt.Fprintf(env.stdout, "records:    %d in %d session(s), %d scope(s)\n", s.Records, s.Sessions, s.Scopes)
	fmt.Fprintf(env.stdout, "change log: seq %d, %d entries kept\n", s.LogSeq, s.LogPending)
	fmt.Fprintf(env.stdout, "indexes:    vector %d live, watermark %d; text watermark %d\n", s.VectorLen, s.VectorWatermark, s.TextWatermark)
	return nil
}
