package main

import (
	"context"
	"fmt"

	"github.com/hmo-dev/hmo/engine"
)

// printTiers shows tier sizes and, once the store has served tiered
// queries, how the tier walk answered them (the counters are kept in the
// store, across processes).
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
	e, err := sf.openExisting(env)
	if err != nil {
		return err
	}
	defer closeStore(e, &err)
	s, err := e.Stats()
	if err != nil {
		return err
	}
	ts := e.TierStats()
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
	printTiers(env, s.Records, ts)
	return nil
}
