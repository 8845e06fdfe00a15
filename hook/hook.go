package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/claudecode"
)

// Claude handles one Claude Code hook event: it reads the payload from in,
// acts through svc and writes the hook's output, if any, to out. It
// returns within opts.Timeout provided svc honours its context. Errors
// are for the log: the process running the hook should exit 0 anyway, so
// that memory never blocks the agent.
func Claude(ctx context.Context, event string, in io.Reader, out io.Writer, svc api.Service, opts *Options) error {
	o, err := withDefaults(opts)
	if err != nil {
		return err
	}
	if !slices.Contains(Events, event) {
		return fmt.Errorf("%w %q (want one of %v)", ErrUnknownEvent, event, Events)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	// The work runs in a goroutine so that the hook returns at its
	// deadline whatever it is blocked on (a read the context cannot
	// interrupt); output written after that is dropped.
	gw := &gatedWriter{w: out}
	done := make(chan error, 1) // buffered: the worker never blocks on send
	go func() { done <- run(ctx, event, in, gw, svc, o) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(deadlineGrace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		gw.close()
		return fmt.Errorf("%w (%s): %v", ErrDeadline, o.Timeout, ctx.Err())
	}
}

// deadlineGrace is how long after its deadline the hook waits for its
// work to notice the cancelled context before it returns anyway.
const deadlineGrace = 100 * time.Millisecond

func run(ctx context.Context, event string, in io.Reader, out io.Writer, svc api.Service, o *Options) error {
	p, err := readPayload(ctx, in)
	if err != nil {
		return err
	}
	if p.HookEventName != "" && p.HookEventName != event {
		return fmt.Errorf("%w: hook_event_name %q, command line says %q", ErrPayload, p.HookEventName, event)
	}
	scope := claudecode.ProjectScope(p.CWD)
	switch event {
	case EventSessionStart, EventUserPromptSubmit:
		return printContext(ctx, event, &p, scope, out, svc, o)
	case EventPostCompact:
		// The summary first: it is what the compaction kept of the
		// session, and the transcript may be long.
		serr := storeSummary(ctx, &p, scope, svc, o)
		_, err := ingest(ctx, &p, scope, svc, o)
		return errors.Join(serr, err)
	default:
		_, err := ingest(ctx, &p, scope, svc, o)
		return err
	}
}

// gatedWriter passes writes through until it is closed, then drops them.
type gatedWriter struct {
	mu     sync.Mutex // guards closed and serialises writes
	w      io.Writer
	closed bool
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return 0, ErrDeadline
	}
	return g.w.Write(p)
}

func (g *gatedWriter) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// readPayload parses the payload, giving up when ctx ends: a hook whose
// stdin is never closed must still return.
func readPayload(ctx context.Context, in io.Reader) (Payload, error) {
	type result struct {
		p   Payload
		err error
	}
	ch := make(chan result, 1) // buffered: the reader never blocks on send
	go func() {
		p, err := ParsePayload(in)
		ch <- result{p, err}
	}()
	select {
	case r := <-ch:
		return r.p, r.err
	case <-ctx.Done():
		return Payload{}, fmt.Errorf("reading payload: %w", ctx.Err())
	}
}

// output is the JSON a hook prints to add context.
type output struct {
	HookSpecificOutput specificOutput `json:"hookSpecificOutput"`
}

type specificOutput struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext"`
}

func writeContext(out io.Writer, event, text string) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false) // the context's tags stay readable
	return enc.Encode(output{specificOutput{event, text}})
}
