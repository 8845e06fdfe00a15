package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo/api"
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

func newStatsCmd(env *env) *cobra.Command {
	var sf storeFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats [flags]",
		Short: "describe the store",
		Long:  "Describe the store: records, sessions, scopes, indexes, tiers and how the tier walk served queries, the LLM steps.",
		Example: `  hmo stats
  hmo stats --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runStats(cmd.Context(), env, &sf, asJSON) },
	}
	sf.register(cmd.Flags(), withChat)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func runStats(ctx context.Context, env *env, sf *storeFlags, asJSON bool) (err error) {
	var s engine.Stats
	var ts engine.TierStats
	daemon := 0
	if c, pid := sf.runningDaemon(ctx, env); c != nil {
		defer c.Close()
		resp, err := c.Stats(ctx)
		if err != nil {
			return err
		}
		s, ts, daemon = resp.Stats, resp.Tiers, pid
	} else {
		var e *engine.Engine
		if e, err = sf.openRead(env); err != nil {
			return err
		}
		defer closeStore(e, &err)
		if s, err = e.Stats(); err != nil {
			return err
		}
		ts = e.TierStats()
	}
	if asJSON {
		return writeJSON(env, api.StatsResponse{Stats: s, Tiers: ts})
	}
	fmt.Fprintf(env.stdout, "store:      %s (schema %d, %.1f MiB on disk)\n", s.Dir, s.Schema, float64(s.DiskBytes)/(1<<20))
	fmt.Fprintf(env.stdout, "embedder:   %s (%d dims; indexes %s)\n", s.Embedder, s.Dims, s.IndexLayout)
	fmt.Fprintf(env.stdout, "records:    %d in %d session(s), %d scope(s)\n", s.Records, s.Sessions, s.Scopes)
	fmt.Fprintf(env.stdout, "change log: seq %d, %d entries kept\n", s.LogSeq, s.LogPending)
	if s.VectorOpen {
		fmt.Fprintf(env.stdout, "indexes:    vector %d live, watermark %d; text watermark %d\n", s.VectorLen, s.VectorWatermark, s.TextWatermark)
	} else {
		fmt.Fprintf(env.stdout, "indexes:    vector index not loaded (it opens at the first archive search); text watermark %d\n", s.TextWatermark)
	}
	printTiers(env, s.Records, ts)
	if daemon != 0 {
		fmt.Fprintf(env.stdout, "served by:  hmo daemon, pid %d\n", daemon)
	}
	printSteps(env, &s)
	return nil
}

// printSteps reports the LLM steps: whether they run, and per step how
// often the model's answer was used and how often the embedded default
// was used instead, and why.
func printSteps(env *env, s *engine.Stats) {
	if !s.LLM {
		fmt.Fprintln(env.stdout, "llm steps:  off (no chat model: embedded heuristic importance, extractive summaries and profile, score-test sufficiency)")
	} else {
		fmt.Fprintf(env.stdout, "llm steps:  on; %d record(s) waiting for enrichment\n", s.EnrichPending)
	}
	for _, st := range s.Steps {
		fmt.Fprintf(env.stdout, "  %-12s %d calls, %d used, %d fell back to the embedded default%s\n", st.Step, st.Calls, st.OK, st.Fallbacks, reasons(st.Reasons))
	}
	if s.Profile != "" {
		fmt.Fprintf(env.stdout, "  profile from: %s\n", s.Profile)
	}
	if s.EnrichError != "" {
		fmt.Fprintf(env.stdout, "  enrichment worker error: %s\n", s.EnrichError)
	}
}

func reasons(r map[string]uint64) string {
	if len(r) == 0 {
		return ""
	}
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(" (")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, r[k])
	}
	b.WriteString(")")
	return b.String()
}
