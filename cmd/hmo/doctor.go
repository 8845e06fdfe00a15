package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/localllm/ollama"
)

// doctorTimeout bounds each call doctor makes to the Ollama server.
const doctorTimeout = 5 * time.Second

// checkup collects doctor's findings, one line each.
type checkup struct {
	env      *env
	findings []finding
	problems int
}

// finding is one line of doctor's report.
type finding struct {
	Status  string `json:"status"`  // ok, fail or note
	Check   string `json:"check"`   // store, embedder, indexes, ollama, ...
	Message string `json:"message"` // the line without status and check
}

func (c *checkup) add(status, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	check, rest, ok := strings.Cut(msg, ": ")
	if !ok || strings.Contains(check, " ") {
		check, rest = "", msg
	}
	c.findings = append(c.findings, finding{status, check, rest})
}

func (c *checkup) ok(format string, a ...any) { c.add("ok", format, a...) }

func (c *checkup) fail(format string, a ...any) {
	c.problems++
	c.add("fail", format, a...)
}

func (c *checkup) note(format string, a ...any) { c.add("note", format, a...) }

// print writes the findings, one line each or as JSON.
func (c *checkup) print(asJSON bool) error {
	if asJSON {
		return writeJSON(c.env, struct {
			Problems int       `json:"problems"`
			Findings []finding `json:"findings"`
		}{c.problems, c.findings})
	}
	for _, f := range c.findings {
		label := map[string]string{"ok": "ok    ", "fail": "FAIL  ", "note": "note  "}[f.Status]
		if f.Check != "" {
			fmt.Fprintf(c.env.stdout, "%s%s: %s\n", label, f.Check, f.Message)
		} else {
			fmt.Fprintf(c.env.stdout, "%s%s\n", label, f.Message)
		}
	}
	return nil
}

func newDoctorCmd(env *env) *cobra.Command {
	var sf storeFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor [flags]",
		Short: "check the store and the local models",
		Long:  "Check the store and the local models, one line per finding (ok, FAIL, note); exit 1 when something fails.",
		Example: `  hmo doctor
  hmo doctor --chat-model qwen2.5:3b --ollama-host 127.0.0.1:11434`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runDoctor(cmd.Context(), env, &sf, asJSON) },
	}
	sf.register(cmd.Flags(), withChat)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the findings as JSON: {problems, findings: [{status, check, message}]}")
	return cmd
}

func runDoctor(ctx context.Context, env *env, sf *storeFlags, asJSON bool) error {
	dir, err := sf.path(env)
	if err != nil {
		return err
	}
	c := &checkup{env: env}
	models := sf.models.resolve(env)
	id, storeOK := c.store(dir, sf)
	c.ollama(ctx, models.Host, models.ChatModel, id, storeOK)
	if err := c.print(asJSON); err != nil {
		return err
	}
	if c.problems > 0 {
		return fmt.Errorf("%d problem(s) found", c.problems)
	}
	return nil
}

// store checks the store's identity, then opens it and reads its health.
func (c *checkup) store(dir string, sf *storeFlags) (engine.Identity, bool) {
	id, err := engine.ReadIdentity(dir, time.Second)
	switch {
	case errors.Is(err, engine.ErrNotFound):
		c.fail("store: no store in %s — create one with 'hmo init --dir %s'", dir, dir)
		return id, false
	case errors.Is(err, engine.ErrLocked):
		c.fail("store: %s is in use by another hmo process — stop it, or wait for it to finish", dir)
		return id, false
	case err != nil:
		c.fail("store: cannot read %s: %v — check the path and its permissions", dir, err)
		return id, false
	}
	c.ok("embedder: %s (%d dims), indexes %s", id.Embedder, id.Dims, id.IndexLayout)
	if !c.file(dir) {
		return id, false
	}
	if id.Reindexing != "" {
		c.note("reindex to %s was interrupted — run 'hmo reindex --embedder %s' to resume (the old vectors serve meanwhile)", id.Reindexing, reindexSpec(id.Reindexing))
	}
	chat := sf.models.chatModel
	sf.models.chatModel = ""     // open without the LLM steps: doctor only looks
	e, err := sf.openRead(c.env) // doctor only looks: nothing is written
	sf.models.chatModel = chat
	if err != nil {
		c.fail("store: %v — %s", err, storeHint(err, id))
		return id, false
	}
	defer e.Close()
	// The check covers the archive's vector index too: load it.
	err = e.OpenVectorIndex()
	var s engine.Stats
	if err == nil {
		s, err = e.Stats()
	}
	if err != nil {
		c.fail("store: %v — the store may be damaged; export what you can with 'hmo export'", err)
		return id, false
	}
	c.ok("store: %s, %d records, %.1f MiB", s.Dir, s.Records, float64(s.DiskBytes)/(1<<20))
	if s.VectorWatermark < s.LogSeq || s.TextWatermark < s.LogSeq {
		c.fail("indexes: behind the change log (vector %d, text %d, log %d) — reopen the store to catch up; if it persists, delete %s/text and %s/vectors* to rebuild",
			s.VectorWatermark, s.TextWatermark, s.LogSeq, dir, dir)
	} else {
		c.ok("indexes: vector %d live, watermarks vector %d, text %d = log %d", s.VectorLen, s.VectorWatermark, s.TextWatermark, s.LogSeq)
	}
	if rb, err := e.Rebuilds(); err == nil && len(rb) > 0 {
		c.note("indexes: rebuilt %d time(s) by hmo on its own; the last ones:", len(rb))
		for _, r := range rb[max(0, len(rb)-5):] {
			c.note("  %s %s index: %s", r.Time.Format(time.RFC3339), r.Index, r.Reason)
		}
	}
	if s.EnrichPending > 0 {
		c.note("enrichment: %d record(s) wait for the LLM steps — they run whenever the store is open with --chat-model", s.EnrichPending)
	}
	for _, st := range s.Steps {
		if st.Fallbacks > 0 {
			c.note("llm step %s fell back %d of %d times%s — see the ollama lines below", st.Step, st.Fallbacks, st.Calls, reasons(st.Reasons))
		}
	}
	return id, true
}

// file checks the store file page by page (bbolt's tx.Check) and reads
// every record; it reports whether the store may be opened.
func (c *checkup) file(dir string) bool {
	rep, err := engine.Check(dir, nil)
	if err != nil {
		c.fail("store file: %v", err)
		return false
	}
	if len(rep.Problems) > 0 {
		c.fail("store file: damaged, %d problem(s); %d record(s) readable — copy them into a new store with 'hmo salvage --dir %s NEWDIR'", len(rep.Problems), rep.Records, dir)
		for _, p := range rep.Problems[:min(len(rep.Problems), 5)] {
			c.note("  %s", p)
		}
		return false
	}
	c.ok("store file: consistent (page check), %d record(s) readable", rep.Records)
	return true
}

// storeHint says what to do about an error opening the store.
func storeHint(err error, id engine.Identity) string {
	switch {
	case errors.Is(err, engine.ErrEmbedderMismatch):
		return "run 'hmo reindex --embedder ...' to switch embedders"
	case errors.Is(err, engine.ErrModelUnavailable), errors.Is(err, engine.ErrModelNotFound):
		return "the store uses " + id.Embedder + ": start Ollama with that model, or see the ollama lines below"
	case errors.Is(err, engine.ErrSchema):
		return "this hmo is older than the store: upgrade hmo"
	}
	return "check the path, its permissions and free disk space"
}

func reindexSpec(name string) string {
	if model, ok := ollama.ParseEmbedderName(name); ok {
		return "ollama:" + model
	}
	return "static"
}

// ollama checks the server and the models the store and flags need.
func (c *checkup) ollama(ctx context.Context, host, chatModel string, id engine.Identity, storeOK bool) {
	embedModel, needEmbed := ollama.ParseEmbedderName(id.Embedder)
	needed := needEmbed || chatModel != ""
	cl, err := ollama.New(&ollama.Options{Host: host, CallTimeout: doctorTimeout, Retries: -1})
	if err != nil {
		c.fail("ollama: %v — set OLLAMA_HOST to http://host:port", err)
		return
	}
	v, err := cl.Version(ctx)
	if err != nil {
		msg := fmt.Sprintf("ollama: not reachable at %s — start it with 'ollama serve' or set OLLAMA_HOST", cl.Host())
		switch {
		case needEmbed:
			c.fail("%s (the store's embedder needs it: writes and vector search fail, recall falls back to full-text)", msg)
		case chatModel != "":
			c.fail("%s (LLM steps fall back to the embedded defaults until then)", msg)
		default:
			c.note("%s (not needed: static embedder, no chat model)", msg)
		}
		return
	}
	c.ok("ollama: %s at %s", v, cl.Host())
	if !needed {
		c.note("ollama: not used — set --chat-model or $%s for the LLM steps, 'hmo reindex --embedder ollama' for its embeddings", envChatModel)
	}
	if needEmbed {
		c.model(ctx, cl, embedModel, "embedding", fmt.Sprintf("run 'ollama pull %s', or 'hmo reindex --embedder static'", embedModel))
	}
	if chatModel != "" {
		c.model(ctx, cl, chatModel, "chat", fmt.Sprintf("run 'ollama pull %s' (until then the LLM steps fall back to the embedded defaults)", chatModel))
	}
	if b := cl.Breaker(); b.Open {
		c.fail("ollama: breaker open after %d failures (%s) — check the server's log", b.Failures, b.LastErr)
	}
}

func (c *checkup) model(ctx context.Context, cl *ollama.Ollama, model, kind, fix string) {
	has, err := cl.HasModel(ctx, model)
	switch {
	case err != nil:
		c.fail("ollama: cannot list models: %v — check the server's log", err)
	case !has:
		c.fail("ollama: %s model %s not found — %s", kind, model, fix)
	default:
		c.ok("ollama: %s model %s present", kind, model)
	}
}
