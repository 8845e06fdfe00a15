package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/engine"
)

func runRecall(ctx context.Context, env *env, args []string) (err error) {
	fs := newFlags(env, "recall", "QUERY...")
	var sf storeFlags
	sf.register(fs)
	var q engine.Query
	var from, to string
	asJSON := fs.Bool("json", false, "print JSON")
	fs.IntVar(&q.K, "k", engine.DefaultK, "number of results")
	fs.StringVar(&q.Scope, "scope", "", "only this scope")
	fs.StringVar(&q.Session, "session", "", "only this session")
	fs.StringVar(&from, "from", "", "only records at or after this time")
	fs.StringVar(&to, "to", "", "only records before this time")
	if err := parse(fs, args); err != nil {
		return err
	}
	if q.Text = strings.Join(fs.Args(), " "); strings.TrimSpace(q.Text) == "" {
		return usageError{"recall needs a query"}
	}
	if q.From, err = parseTime(from); err != nil {
		return err
	}
	if q.To, err = parseTime(to); err != nil {
		return err
	}
	var res []engine.Result
	if c, _ := sf.runningDaemon(ctx, env); c != nil {
		defer c.Close()
		res, err = recallDaemon(ctx, c, &q)
	} else {
		var e *engine.Engine
		if e, err = sf.openExisting(env); err != nil {
			return err
		}
		defer closeStore(e, &err)
		res, err = e.Recall(ctx, q)
	}
	if errors.Is(err, engine.ErrInvalidQuery) || errors.Is(err, api.ErrInvalid) {
		return usageError{err.Error()} // a bad -k or time range
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env, res)
	}
	for _, r := range res {
		fmt.Fprintf(env.stdout, "%d\t%.3f\ttier %d\t%s\t%s\n", r.Record.ID, r.Score, r.Tier,
			r.Record.Time.Format("2006-01-02 15:04"), oneLine(r.Record.Role, r.Record.Text))
	}
	return nil
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
func recallDaemon(ctx context.Context, svc api.Service, q *engine.Query) ([]engine.Result, error) {
	resp, err := svc.Search(ctx, api.SearchRequest{
		Query: q.Text, K: q.K, MaxTokens: api.MaxSearchTokens,
		Filter: api.Filter{Scope: q.Scope, Session: q.Session, From: q.From, To: q.To},
	})
	if err != nil {
		return nil, err
	}
	out := make([]engine.Result, len(resp.Results))
	for i, m := range resp.Results {
		out[i] = engine.Result{Record: toRecord(&m), Score: m.Score, Tier: m.Tier}
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
