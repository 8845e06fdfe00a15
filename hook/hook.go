package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

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
