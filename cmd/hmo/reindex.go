package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo"
)

func newReindexCmd(env *env) *cobra.Command {
	var sf storeFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "reindex --embedder static|ollama[:model] [flags]",
		Short: "re-embed every record with another embedder",
		Long:  "Re-embed every record with another embedder. Progress is kept: an interrupted reindex resumes when run again.",
		Example: `  hmo reindex --embedder ollama:nomic-embed-text
  hmo reindex --embedder static`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runReindex(cmd.Context(), env, &sf, asJSON) },
	}
	sf.register(cmd.Flags(), withEmbedder)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON: {from, to, dims, changed}")
	return cmd
}

// reindexResult is what reindex --json prints.
type reindexResult struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Dims    int    `json:"dims"`
	Changed bool   `json:"changed"` // false: the store already used To
}

func runReindex(ctx context.Context, env *env, sf *storeFlags, asJSON bool) (err error) {
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
		if asJSON {
			return writeJSON(env, reindexResult{From: from, To: from, Dims: emb.Dims()})
		}
		fmt.Fprintf(env.stdout, "store already uses %s\n", from)
		return nil
	}
	p := newProgress(env, "reindex")
	if err := e.Reindex(ctx, emb, p.update); err != nil {
		return fmt.Errorf("%w (progress is kept: run the same command again to resume)", err)
	}
	if asJSON {
		return writeJSON(env, reindexResult{From: from, To: emb.Name(), Dims: emb.Dims(), Changed: true})
	}
	fmt.Fprintf(env.stdout, "reindexed from %s to %s (%d dims)\n", from, emb.Name(), emb.Dims())
	return nil
}
