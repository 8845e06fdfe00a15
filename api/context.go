package api

import (
	"context"
	"fmt"
	"strings"

	"github.com/hmo-dev/hmo/engine"
)

// ContextHeader opens every non-empty context block; callers that frame
// the block themselves may strip it.
const ContextHeader = "Relevant long-term memories (hmo), most relevant first. They may be outdated; ids can be passed to memory_get.\n"

// Context renders the memories relevant to req.Prompt as a block of text
// for a prompt, within req.MaxTokens, best first. A memory is relevant
// when its calibrated relevance is at least req.MinScore (default
// DefaultMinScore); an assistant's reply comes with the turn it answers.
// With an empty prompt the block holds the scope's most recent memories.
// The block is empty when nothing is relevant.
func (l *Local) Context(ctx context.Context, req ContextRequest) (ContextResponse, error) {
	tokens := req.MaxTokens
	if tokens == 0 {
		tokens = DefaultContextTokens
	}
	if tokens < 0 || tokens > MaxContextTokens {
		return ContextResponse{}, fmt.Errorf("%w: max_tokens %d outside [1, %d]", ErrInvalid, tokens, MaxContextTokens)
	}
	var resp ContextResponse
	if strings.TrimSpace(req.Prompt) == "" {
		recs, err := l.contextRecords(ctx, &req)
		if err != nil {
			return ContextResponse{}, err
		}
		resp = render(recs, tokens)
	} else {
		var err error
		if resp, err = l.assemble(ctx, &req, tokens); err != nil {
			return ContextResponse{}, err
		}
		if l.noAccess {
			return resp, nil
		}
		if err := l.e.Access(resp.IDs...); err != nil {
			return ContextResponse{}, err
		}
	}
	return resp, nil
}

func (l *Local) contextRecords(ctx context.Context, req *ContextRequest) ([]engine.Record, error) {
	if strings.TrimSpace(req.Prompt) == "" {
		page, err := l.e.List(engine.ListQuery{Scope: req.Scope, Limit: ContextCandidates, Reverse: true})
		return page.Records, err
	}
	floor, err := minScore(req.MinScore)
	if err != nil {
		return nil, err
	}
	// The rendered block is cut to the budget: render counts what it
	// shows as recalled.
	res, err := l.e.Recall(ctx, engine.Query{Text: req.Prompt, K: ContextCandidates, Scope: req.Scope, NoAccess: true})
	if err != nil {
		return nil, err
	}
	var out []engine.Record
	in := map[uint64]bool{}
	for _, r := range res {
		if r.Relevance < floor || in[r.Record.ID] {
			continue
		}
		// An assistant's reply comes with the turn it answers, by
		// another speaker: "Noted: no shellfish." is read with "I'm
		// allergic to shellfish", which it was indexed with.
		if p := r.Record.Prev; p != 0 && r.Record.Role == roleAssistant && !in[p] {
			if prev, err := l.e.Get(p); err == nil && prev.Role != roleAssistant && prev.SupersededBy == 0 {
				in[p] = true
				out = append(out, prev)
			}
		}
		in[r.Record.ID] = true
		out = append(out, r.Record)
	}
	return out, nil
}

// roleAssistant is the role of an agent's own turns.
const roleAssistant = "assistant"

// render lays records out one per line, "- [#id date role] text", until
// the budget is spent; the first memory is shortened to fit if needed.
func render(recs []engine.Record, tokens int) ContextResponse {
	return layout(recs, tokens, contextLine, nil, false)
}

// layout writes line(r) for each record, best first, while the budget
// lasts, calling wrote after each line written; the first memory is
// shortened to fit if needed. A line that does not fit ends the block, or
// with pack is passed over for the next.
func layout(recs []engine.Record, tokens int, line func(*engine.Record) string, wrote func(*engine.Record), pack bool) ContextResponse {
	resp := ContextResponse{IDs: []uint64{}}
	if len(recs) == 0 {
		return resp
	}
	var sb strings.Builder
	sb.WriteString(ContextHeader)
	left := tokens*BytesPerToken - len(ContextHeader)
	for i := range recs {
		l := line(&recs[i])
		if len(l) > left {
			if len(resp.IDs) > 0 && pack {
				continue
			}
			if len(resp.IDs) > 0 || left < 2*minTextBytes {
				break
			}
			l = shorten(l[:len(l)-1], left-len(ellipsis)-1) + "\n"
		}
		sb.WriteString(l)
		left -= len(l)
		resp.IDs = append(resp.IDs, recs[i].ID)
		if wrote != nil {
			wrote(&recs[i])
		}
	}
	if len(resp.IDs) == 0 {
		return resp
	}
	resp.Context = sb.String()
	resp.Tokens = EstimateTokens(resp.Context)
	return resp
}

func contextLine(r *engine.Record) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "- [#%d %s", r.ID, r.Time.UTC().Format("2006-01-02"))
	if r.Role != "" {
		sb.WriteString(" " + r.Role)
	}
	sb.WriteString("] ")
	sb.WriteString(strings.Join(strings.Fields(r.Text), " "))
	sb.WriteString("\n")
	return sb.String()
}
