package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo/engine"
)

// compactLockWait bounds the wait for the store's lock when compacting.
const compactLockWait = 5 * time.Second

// runCompact removes what deleted records left in the files: freed bbolt
// pages, deleted documents in Bleve's segments, tombstoned vectors.
func newCompactCmd(env *env) *cobra.Command {
	var sf storeFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "compact [flags]",
		Short:   "rewrite the store and its indexes without what deleted records left in the files, and build what the vector index lacks",
		Example: "  hmo compact --dir ~/notes-store",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := compactIndexes(cmd.Context(), env, &sf); err != nil {
				return err
			}
			res, err := compactStore(env, &sf)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(env, res)
			}
			res.print(env)
			return nil
		},
	}
	sf.register(cmd.Flags(), withOllama)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON: {dir, bytes_before, bytes_after}")
	return cmd
}

// compactIndexes compacts the indexes, then builds what the vector index
// lacks (its partition): the other commands leave it to the daemon, hmo
// import and this one.
func compactIndexes(ctx context.Context, env *env, sf *storeFlags) (err error) {
	e, err := sf.openExisting(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	if err := e.CompactIndexes(ctx); err != nil {
		return err
	}
	bp := newProgress(env, "vector index")
	return e.FinishBuilds(ctx, func(done, total int64) { bp.update(int(100*done/max(1, total)), 100) })
}

// compactResult is what compact did: the store's size on disk before and
// after.
type compactResult struct {
	Dir         string `json:"dir"`
	BytesBefore int64  `json:"bytes_before"`
	BytesAfter  int64  `json:"bytes_after"`
}

func (c *compactResult) print(env *env) {
	fmt.Fprintf(env.stdout, "compacted %s: %.1f MiB -> %.1f MiB\n", c.Dir, float64(c.BytesBefore)/(1<<20), float64(c.BytesAfter)/(1<<20))
}

// compactStore rewrites the closed store's bbolt file with its live data.
func compactStore(env *env, sf *storeFlags) (compactResult, error) {
	dir, err := sf.path(env)
	if err != nil {
		return compactResult{}, err
	}
	before := engine.DiskBytes(dir)
	if err := engine.CompactStore(dir, compactLockWait); err != nil {
		return compactResult{}, err
	}
	return compactResult{Dir: dir, BytesBefore: before, BytesAfter: engine.DiskBytes(dir)}, nil
}
