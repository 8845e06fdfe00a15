package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
)

// maxRecallK is the most results recall gives: as deep as the API pages.
const maxRecallK = api.MaxSearchDepth

// recallFlags are the flags of recall.
type recallFlags struct {
	store  storeFlags
	filter filterFlags
	q      engine.Query
	asJSON bool
	// minScore is the least calibrated relevance printed, as the API's
	// min_score: 0 the default floor, negative none.
	minScore float64
}

func newRecallCmd(env *env) *cobra.Command {
	var f recallFlags
	cmd := &cobra.Command{
		Use:   "recall [flags] QUERY...",
		Short: "search memory",
		Long:  "Search memory: the records most relevant to the query, best first (id, score, tier, time, text).",
		Example: `  hmo recall "what am I allergic to"
  hmo recall "marathon training" -k 3 --session s3
  hmo recall "flights" --from 2024-05-01 --to 2024-06-01 --json`,
		RunE: func(cmd *cobra.Command, args []string) error { return runRecall(cmd.Context(), env, &f, args) },
	}
	fs := cmd.Flags()
	f.store.register(fs, withMode|withChat)
	fs.BoolVar(&f.asJSON, "json", false, "print JSON")
	fs.IntVarP(&f.q.K, "k", "k", engine.DefaultK, fmt.Sprintf("number of results, 1 to %d", maxRecallK))
	fs.Float64Var(&f.minScore, "min-score", 0, fmt.Sprintf("least calibrated relevance of a result, at most 1 (0: the default floor %.4f, as search and context use; negative: every result)", api.DefaultMinScore))
	f.filter.register(fs)
	return cmd
}

func runRecall(ctx context.Context, env *env, f *recallFlags, args []string) (err error) {
	sf, q := &f.store, f.q
	if q.Text = strings.Join(args, " "); strings.TrimSpace(q.Text) == "" {
		return usageError{"recall needs a query"}
	}
	if q.K < 1 || q.K > maxRecallK {
		// The same limit whether the daemon or the store answers.
		return usageError{fmt.Sprintf("k=%d outside [1, %d]", q.K, maxRecallK)}
	}
	filter, err := f.filter.filter()
	if err != nil {
		return err
	}
	floor, err := api.MinScoreFloor(f.minScore)
	if err != nil {
		return usageError{err.Error()}
	}
	q.Scope, q.Session, q.From, q.To = filter.Scope, filter.Session, filter.From, filter.To
	var res []engine.Result
	if c, _ := sf.runningDaemon(ctx, env); c != nil {
		defer c.Close()
		res, err = recallDaemon(ctx, c, &q, f.minScore)
	} else {
		var e *engine.Engine
		if e, err = openForRecall(env, sf); err != nil {
			return err
		}
		// Results printed are the answer: failing to save afterwards (a
		// full disk) is only a warning.
		defer closeStoreWarn(env, "recall", e)
		res, err = e.Recall(ctx, q)
		// The daemon's search drops results below the floor; so does
		// the store's own answer.
		res = slices.DeleteFunc(res, func(r engine.Result) bool { return r.Relevance < floor })
	}
	if errors.Is(err, engine.ErrInvalidQuery) || errors.Is(err, api.ErrInvalid) {
		return usageError{err.Error()} // a bad -k or time range
	}
	if err != nil {
		return err
	}
	if f.asJSON {
		return writeJSON(env, res)
	}
	if len(res) == 0 {
		fmt.Fprintln(env.stderr, "hmo recall: no memory reaches the relevance floor (--min-score -1 lists the nearest anyway)")
	}
	for _, r := range res {
		fmt.Fprintf(env.stdout, "%d\t%.3f\ttier %d\t%s\t%s\n", r.Record.ID, r.Score, r.Tier,
			r.Record.Time.Format("2006-01-02 15:04"), oneLine(r.Record.Role, r.Record.Text))
	}
	return nil
}

// openForRecall opens the store for writing, so that recall counts
// accesses (the tiers' priorities); when it cannot be opened for writing
// (a full disk), it opens it read-only and says so.
func openForRecall(env *env, sf *storeFlags) (*engine.Engine, error) {
	e, err := sf.openExisting(env)
	if err == nil || errors.Is(err, engine.ErrLocked) || errors.Is(err, engine.ErrNoStore) || errors.Is(err, engine.ErrDamaged) ||
		errors.Is(err, engine.ErrUntrusted) || errors.As(err, new(usageError)) || strings.HasPrefix(err.Error(), "no store") {
		return e, err
	}
	ro, rerr := sf.openRead(env)
	if rerr != nil {
		return nil, err
	}
	fmt.Fprintf(env.stderr, "hmo recall: warning: opened read-only (%s): this recall is not counted\n", strings.TrimPrefix(err.Error(), "hmo: "))
	return ro, nil
}

// oneLine renders a record's text on one line, prefixed by its role.
func oneLine(role, text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > 160 {
		text = text[:157] + "..."
	}
	if role != "" {
		return role + ": " + text
	}
	return text
}

func writeJSON(env *env, v any) error {
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// recallDaemon searches through the daemon holding the store. Results
// carry the record and fused score; component scores and headers stay in
// the daemon.
//
// A page of the API holds at most api.MaxSearchK results: it pages on to
// reach q.K, which is at most maxRecallK.
func recallDaemon(ctx context.Context, svc api.Service, q *engine.Query, minScore float64) ([]engine.Result, error) {
	req := api.SearchRequest{
		Query: q.Text, MaxTokens: api.MaxSearchTokens, MinScore: minScore,
		Filter: api.Filter{Scope: q.Scope, Session: q.Session, From: q.From, To: q.To},
	}
	var out []engine.Result
	for len(out) < q.K {
		req.K = min(q.K-len(out), api.MaxSearchK)
		resp, err := svc.Search(ctx, req)
		if err != nil {
			return nil, err
		}
		for _, m := range resp.Results {
			out = append(out, engine.Result{Record: toRecord(&m), Score: m.Score, Tier: m.Tier})
		}
		if req.Cursor = resp.NextCursor; req.Cursor == "" || len(resp.Results) == 0 {
			break
		}
	}
	return out, nil
}

// toRecord is the part of a record the API carries.
func toRecord(m *api.Memory) engine.Record {
	return engine.Record{
		ID: m.ID, Scope: m.Scope, Session: m.Session, Role: m.Role, Time: m.Time, Text: m.Text,
		Sources: m.Sources, Supersedes: m.Supersedes, SupersededBy: m.SupersededBy,
	}
}
