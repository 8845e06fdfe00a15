package hook

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hmo-dev/hmo/api"
	"github.com/hmo-dev/hmo/capture"
	"github.com/hmo-dev/hmo/claudecode"
)

// ingest adds the transcript's turns not yet ingested and returns how
// many it added.
func ingest(ctx context.Context, p *Payload, scope string, svc api.Service, o *Options) (int, error) {
	if p.TranscriptPath == "" {
		return 0, nil
	}
	// Refuse what is not a transcript before anything is written.
	path := filepath.Clean(p.TranscriptPath)
	f, fi, err := openTranscript(path, o.TranscriptRoots)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
		return 0, err
	}
	files := filesFor(o.StateDir, path)
	unlock, err := lock(files, o.Clock(), o.StaleLock)
	if err != nil {
		return 0, err
	}
	defer unlock()

	st := loadState(files, path)
	if fi.Size() < st.Offset {
		st.Offset = 0 // rewritten or truncated: start over, de-duplicated
	}
	if _, err := f.Seek(st.Offset, io.SeekStart); err != nil {
		return 0, err
	}
	// At most MaxReadBytes per run, and no read past the deadline.
	r := ctxReader{ctx, io.LimitReader(f, o.MaxReadBytes)}
	in := ingester{svc: svc, scope: scope, session: p.SessionID, files: files, st: st, batch: o.Batch, cap: capture.New(), distil: o.Distiller}
	return in.run(ctx, claudecode.NewScanner(r, &claudecode.ScanOptions{Offset: st.Offset}))
}

// ingester adds one transcript's new turns in batches.
type ingester struct {
	svc     api.Service
	scope   string
	session string
	files   stateFiles
	st      state
	batch   int
	added   int
	dropped int // turns the keep rule dropped
	cap     *capture.Capture
	distil  capture.Distiller
}

func (in *ingester) run(ctx context.Context, s *claudecode.Scanner) (int, error) {
	var pending []claudecode.Turn
	for s.Scan() {
		t := s.Turn()
		if !in.cap.Keep(t.Text).Keep {
			in.dropped++ // nothing to remember: acknowledgement, idle instruction
			continue
		}
		pending = append(pending, t)
		if len(pending) == in.batch {
			if err := in.commit(ctx, pending, s.Offset()); err != nil {
				return in.added, err
			}
			pending = pending[:0]
		}
	}
	if err := s.Err(); err != nil {
		return in.added, fmt.Errorf("transcript: %w", err)
	}
	return in.added, in.commit(ctx, pending, s.Offset())
}

// commit adds the turns not already stored and records offset as ingested.
func (in *ingester) commit(ctx context.Context, turns []claudecode.Turn, offset int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	fresh, err := in.unseen(ctx, turns)
	if err != nil {
		return err
	}
	var ms []api.NewMemory
	for i := range fresh {
		ms = append(ms, in.memory(&fresh[i]))
		facts, err := in.facts(ctx, &fresh[i])
		if err != nil {
			return err
		}
		ms = append(ms, facts...)
	}
	// Each Add is one transaction; the engine skips what is stored, so a
	// retry after a failure between two Adds stores nothing twice.
	for len(ms) > 0 {
		n := min(len(ms), api.MaxAddMemories)
		resp, err := in.svc.Add(ctx, api.AddRequest{Memories: ms[:n]})
		if err != nil {
			return fmt.Errorf("add: %w", err)
		}
		in.added += n - len(resp.Duplicates)
		ms = ms[n:]
	}
	in.st.Turns += len(fresh)
	in.st.Offset = offset
	return saveState(in.files, in.st)
}

func (in *ingester) memory(t *claudecode.Turn) api.NewMemory {
	session := in.session
	if session == "" {
		session = t.SessionID
	}
	return api.NewMemory{Text: t.Text, Scope: in.scope, Session: session, Role: t.Role, Time: t.Time, Sources: []string{t.Source()}}
}

// RoleFact is the role of the facts distilled from a turn.
const RoleFact = capture.RoleFact

// facts are the memories distilled from a turn: role RoleFact, the
// turn's scope, session and time, and as sources the turn's label and
// that label with "#f" and the fact's number.
func (in *ingester) facts(ctx context.Context, t *claudecode.Turn) ([]api.NewMemory, error) {
	fs, err := in.distil.DistillFacts(ctx, t.Text)
	if err != nil {
		return nil, fmt.Errorf("distil: %w", err)
	}
	var out []api.NewMemory
	for i, f := range fs {
		m := in.memory(t)
		m.Role, m.Text = RoleFact, f.Text
		m.Sources = capture.FactSources(t.Source(), i+1)
		out = append(out, m)
	}
	return out, nil
}

// unseen drops turns whose source label is already stored in the
// session: the guard against ingesting twice after a crash between Add
// and saving the state.
func (in *ingester) unseen(ctx context.Context, turns []claudecode.Turn) ([]claudecode.Turn, error) {
	if len(turns) == 0 {
		return nil, nil
	}
	seen, err := in.storedSources(ctx, turns)
	if err != nil {
		return nil, err
	}
	var out []claudecode.Turn
	for _, t := range turns {
		if src := t.Source(); !seen[src] {
			seen[src] = true // a transcript may repeat a line
			out = append(out, t)
		}
	}
	return out, nil
}

// storedSources lists the sources of the session's memories from the
// earliest turn's time on.
func (in *ingester) storedSources(ctx context.Context, turns []claudecode.Turn) (map[string]bool, error) {
	f := api.Filter{Session: in.memory(&turns[0]).Session}
	from := time.Time{}
	for i, t := range turns {
		if t.Time.IsZero() {
			from = time.Time{}
			break
		}
		if i == 0 || t.Time.Before(from) {
			from = t.Time
		}
	}
	f.From = from
	seen := map[string]bool{}
	req := api.ListRequest{Filter: f, Limit: 100}
	for {
		res, err := in.svc.List(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		for _, m := range res.Memories {
			for _, s := range m.Sources {
				seen[s] = true
			}
		}
		if res.NextCursor == "" || len(res.Memories) == 0 {
			return seen, nil
		}
		req.Cursor = res.NextCursor
	}
}
