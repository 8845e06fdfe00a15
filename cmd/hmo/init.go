package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

func newInitCmd(env *env) *cobra.Command {
	var sf storeFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "init [flags]",
		Short: "create a store",
		Long:  "Create a store (0700 directory, 0600 files). Running it on an existing store is harmless.",
		Example: `  hmo init
  hmo init --dir ~/work-memory --embedder ollama:nomic-embed-text`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runInit(cmd.Context(), env, &sf, asJSON) },
	}
	sf.register(cmd.Flags(), withEmbedder)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the store as JSON: {dir, embedder, dims}")
	return cmd
}

func runInit(_ context.Context, env *env, sf *storeFlags, asJSON bool) (err error) {
	e, err := sf.openInit(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	if asJSON {
		emb := e.Options().Embedder
		return writeJSON(env, struct {
			Dir      string `json:"dir"`
			Embedder string `json:"embedder"`
			Dims     int    `json:"dims"`
		}{e.Dir(), emb.Name(), emb.Dims()})
	}
	fmt.Fprintf(env.stdout, "store ready in %s\n", e.Dir())
	return nil
}
