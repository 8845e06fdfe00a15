package main

import (
	"context"
	"fmt"

	"github.com/hmo-dev/hmo/engine"
)

// printTiers shows tier sizes and, when this process served queries, how
// the tier walk answered them. Counters live in the process: a CLI
// invocation starts them at zero.
func printTiers(env *env, records int, ts engine.TierStats) {
	fmt.Fprintf(env.stdout, "tiers:      tier 1 %d, tier 2 %d, archive %d records\n", ts.Tier1, ts.Tier2, records)
	if ts.Queries == 0 {
		return
	}
	share := func(n uint64) float64 { return float64(n) / float64(ts.Queries) }
	fmt.Fprintf(env.stdout, "tier walk:  %d queries; served by tier 1 %.0f%%, tier 2 %.0f%%, archive %.0f%%; %.0f candidates/query; %d gate firings\n",
		ts.Queries, 100*share(ts.Served[1]), 100*share(ts.Served[2]), 100*share(ts.Served[3]), float64(ts.Scored)/float64(ts.Queries), ts.Firings)
}

func runStats(ctx context.Context, env *env, args []string) (err error) {
	fs := newFlags(env, "stats", "")
	var sf storeFlags
	sf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	var s engine.Stats
	var ts engine.TierStats
	daemon := 0
	if c, pid := sf.runningDaemon(ctx, env); c != nil {
		defer c.Close()
		resp, err := c.Stats(ctx)
		if err != nil {
			return err
		}
		s, daemon = resp.Stats, pid
	} else {
		var e *engine.Engine
		if e, err = sf.openExisting(env); err != nil {
			return err
		}
		defer closeStore(e, &err)
		if s, err = e.Stats(); err != nil {
			return err
		}
		ts = e.TierStats()
	}
	if *asJSON {
		return writeJSON(env, struct {
			engine.Stats
			Tiers engine.TierStats `json:"tiers"`
		}{s, ts})
	}
	fmt.Fprintf(env.stdout, "store:      %s (schema %d, %.1f MiB on disk)\n", s.Dir, s.Schema, float64(s.DiskBytes)/(1<<20))
	fmt.Fprintf(env.stdout, "embedder:   %s (%d dims; indexes %s)\n", s.Embedder, s.Dims, s.IndexLayout)
	fmt.Fprintf(env.stdout, "records:    %d in %d session(s), %d scope(s)\n", s.Records, s.Sessions, s.Scopes)
	fmt.Fprintf(env.stdout, "change log: seq %d, %d entries kept\n", s.LogSeq, s.LogPending)
	fmt.Fprintf(env.stdout, "indexes:    vector %d live, watermark %d; text watermark %d\n", s.VectorLen, s.VectorWatermark, s.TextWatermark)
	if daemon != 0 {
		fmt.Fprintf(env.stdout, "served by:  hmo daemon, pid %d (tier figures live in the daemon)\n", daemon)
		return nil
	}
	printTiers(env, s.Records, ts)
	return nil
}
