package main

import (
	"context"
	"fmt"

	"github.com/hmo-dev/hmo"
)

func runReindex(ctx context.Context, env *env, args []string) (err error) {
	fs := newFlags(env, "reindex", "--embedder static|ollama[:model]")
	var sf storeFlags
	sf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"reindex takes no arguments"}
	}
	if sf.models.embedder == "" {
		return usageError{"reindex needs --embedder static or --embedder ollama[:model]"}
	}
	models := sf.models.resolve(env)
	emb, err := hmo.NewEmbedder(ctx, models.Embedder, models)
	if err != nil {
		return err
	}
	// Open with the store's own embedder: the target is given to Reindex.
	sf.models.embedder = ""
	e, err := sf.openExisting(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	from := e.Options().Embedder.Name()
	if from == emb.Name() {
		fmt.Fprintf(env.stdout, "store already uses %s\n", from)
		return nil
	}
	p := newProgress(env, "reindex")
	if err := e.Reindex(ctx, emb, p.update); err != nil {
		return fmt.Errorf("%w (progress is kept: run the same command again to resume)", err)
	}
	fmt.Fprintf(env.stdout, "reindexed from %s to %s (%d dims)\n", from, emb.Name(), emb.Dims())
	return nil
}
