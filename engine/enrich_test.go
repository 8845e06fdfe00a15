package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmo-dev/hmo/engine"
)

// stubEnricher answers the LLM steps from fixed values or errors; block,
// when set, holds every call until it is closed or the context ends.
type stubEnricher struct {
	i0      float64
	err     error
	block   chan struct{}
	mu      sync.Mutex
	calls   int
	profile string
}

func (s *stubEnricher) wait(ctx context.Context) error {
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	if s.block != nil {
		select {
		case <-s.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.err
}

func (s *stubEnricher) Importance(ctx context.Context, text, profile string) (float64, error) {
	if err := s.wait(ctx); err != nil {
		return 0, err
	}
	return s.i0, nil
}

func (s *stubEnricher) Compress(ctx context.Context, text string) (engine.Compressed, error) {
	if err := s.wait(ctx); err != nil {
		return engine.Compressed{}, err
	}
	return engine.Compressed{Summary: "summary of " + text[:10], Kind: engine.SummarySemantic}, nil
}

func (s *stubEnricher) Profile(ctx context.Context, extractive string) (string, error) {
	if err := s.wait(ctx); err != nil {
		return "", err
	}
	return s.profile, nil
}

func openEnriched(t *testing.T, dir string, enr engine.Enricher, mode engine.Mode) *engine.Engine {
	t.Helper()
	o := testOptions(&fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)})
	o.Enricher, o.Mode = enr, mode
	o.Summarize = func(text string, n int) string { return "extractive " + text[:8] }
	o.EnrichTimeout = 2 * time.Second
	e, err := engine.Open(dir, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func waitEnriched(t *testing.T, e *engine.Engine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.WaitEnriched(ctx); err != nil {
		t.Fatalf("WaitEnriched: %v", err)
	}
}

func step(s engine.Stats, name string) engine.StepStats {
	for _, st := range s.Steps {
		if st.Step == name {
			return st
		}
	}
	return engine.StepStats{}
}

var longText = strings.Repeat("The deployment pipeline builds, tests and ships the service. ", 30)

func TestEnrichmentUsesModelAnswers(t *testing.T) {
	for _, mode := range []engine.Mode{engine.ModeFlat, engine.ModeTiered} {
		t.Run(string(mode), func(t *testing.T) {
			e := openEnriched(t, t.TempDir(), &stubEnricher{i0: 9, profile: "likes tea"}, mode)
			ids := remember(t, e, engine.Input{Text: "hello there"}, engine.Input{Text: longText})
			waitEnriched(t, e)
			for _, id := range ids {
				r, err := e.Get(id)
				if err != nil {
					t.Fatal(err)
				}
				if r.Header.I0 != 9 {
					t.Errorf("record %d: I0 = %v, want 9 (the model's score)", id, r.Header.I0)
				}
			}
			r, _ := e.Get(ids[1])
			if r.SummaryKind != engine.SummarySemantic || r.Text != longText {
				t.Errorf("long record: summary kind %q, raw text kept %v; want semantic and true", r.SummaryKind, r.Text == longText)
			}
			short, _ := e.Get(ids[0])
			if short.Summary != "" {
				t.Errorf("short record got a summary %q, want none", short.Summary)
			}
			s, err := e.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if got := step(s, engine.StepImportance); got.Calls != 2 || got.OK != 2 || got.Fallbacks != 0 {
				t.Errorf("importance counters = %+v, want 2 calls, 2 used", got)
			}
			if got := step(s, engine.StepCompression); got.Calls != 1 || got.OK != 1 {
				t.Errorf("compression counters = %+v, want 1 call, 1 used", got)
			}
		})
	}
}

func TestEnrichmentFallsBackAndCounts(t *testing.T) {
	cases := []struct {
		err    error
		reason string
	}{
		{fmt.Errorf("%w: garbage", engine.ErrModelOutput), "invalid output"},
		{fmt.Errorf("%w: tiny", engine.ErrModelNotFound), "model not found"},
		{fmt.Errorf("%w: refused", engine.ErrModelUnavailable), "unavailable"},
		{context.DeadlineExceeded, "timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			e := openEnriched(t, t.TempDir(), &stubEnricher{err: tc.err}, engine.ModeFlat)
			ids := remember(t, e, engine.Input{Text: longText})
			waitEnriched(t, e)
			r, _ := e.Get(ids[0])
			if r.SummaryKind != engine.SummaryExtractive || !strings.HasPrefix(r.Summary, "extractive") {
				t.Errorf("summary = %q (%s), want the extractive fallback", r.Summary, r.SummaryKind)
			}
			if r.Header.I0 < 1 || r.Header.I0 > 10 {
				t.Errorf("I0 = %v, want the heuristic default on [1, 10]", r.Header.I0)
			}
			s, _ := e.Stats()
			for _, name := range []string{engine.StepImportance, engine.StepCompression} {
				if got := step(s, name); got.Fallbacks != 1 || got.Reasons[tc.reason] != 1 {
					t.Errorf("%s counters = %+v, want 1 fallback for %q", name, got, tc.reason)
				}
			}
		})
	}
}

func TestEnrichmentOutOfRangeScoreFallsBack(t *testing.T) {
	e := openEnriched(t, t.TempDir(), &stubEnricher{i0: 42}, engine.ModeFlat)
	ids := remember(t, e, engine.Input{Text: "short note"})
	waitEnriched(t, e)
	r, _ := e.Get(ids[0])
	if r.Header.I0 == 42 {
		t.Fatalf("I0 = 42 stored, want the out-of-range score refused")
	}
	s, _ := e.Stats()
	if got := step(s, engine.StepImportance); got.Reasons["invalid output"] != 1 {
		t.Errorf("importance counters = %+v, want 1 invalid-output fallback", got)
	}
}

// A write never waits for the model, and a record whose enrichment did not
// finish before Close is enriched after the next Open.
func TestEnrichmentSurvivesCloseBeforeModelAnswers(t *testing.T) {
	dir := t.TempDir()
	slow := &stubEnricher{i0: 8, block: make(chan struct{})}
	e := openEnriched(t, dir, slow, engine.ModeFlat)
	start := time.Now()
	ids := remember(t, e, engine.Input{Text: "I moved to Lisbon in March"})
	if d := time.Since(start); d > time.Second {
		t.Errorf("Remember took %v with a blocked model, want no wait", d)
	}
	if r, err := e.Get(ids[0]); err != nil || r.Text == "" {
		t.Fatalf("record not committed before enrichment: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("Close with a blocked model: %v", err)
	}
	e2 := openEnriched(t, dir, &stubEnricher{i0: 8}, engine.ModeFlat)
	waitEnriched(t, e2)
	r, _ := e2.Get(ids[0])
	if r.Header.I0 != 8 {
		t.Errorf("after reopen I0 = %v, want 8 from the resumed enrichment", r.Header.I0)
	}
}

func TestPersonaProfileFromModelAndFallback(t *testing.T) {
	e := openEnriched(t, t.TempDir(), &stubEnricher{i0: 7, profile: "Maya is a vegetarian runner."}, engine.ModeTiered)
	remember(t, e, engine.Input{Text: "I am vegetarian and I run marathons"})
	waitEnriched(t, e)
	deadline := time.Now().Add(5 * time.Second)
	for {
		text, src := e.PersonaProfile()
		if src == engine.ProfileLLM {
			if text != "Maya is a vegetarian runner." {
				t.Errorf("profile = %q, want the model's", text)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("profile source = %q after 5s, want llm", src)
		}
		time.Sleep(10 * time.Millisecond)
	}

	bad := openEnriched(t, t.TempDir(), &stubEnricher{i0: 7, err: errors.Join(engine.ErrModelOutput)}, engine.ModeTiered)
	remember(t, bad, engine.Input{Text: "I am vegetarian and I run marathons"})
	waitEnriched(t, bad)
	if _, src := bad.PersonaProfile(); src != engine.ProfileExtractive {
		t.Errorf("profile source with a failing model = %q, want extractive", src)
	}
}

func TestNoEnricherKeepsDefaultPath(t *testing.T) {
	e, _ := openTest(t, t.TempDir())
	remember(t, e, engine.Input{Text: longText})
	s, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if s.LLM || s.EnrichPending != 0 || len(s.Steps) != 0 {
		t.Errorf("stats without an Enricher: llm %v, pending %d, steps %v; want off, 0, none", s.LLM, s.EnrichPending, s.Steps)
	}
	if err := e.WaitEnriched(context.Background()); err != nil {
		t.Errorf("WaitEnriched without an Enricher: %v", err)
	}
}

// gatedEnricher holds its first Profile until release is closed and
// makes the later ones slow.
type gatedEnricher struct {
	release  chan struct{}
	mu       sync.Mutex
	profiles int
}

func (g *gatedEnricher) Importance(ctx context.Context, text, profile string) (float64, error) {
	return 7, nil
}

func (g *gatedEnricher) Compress(ctx context.Context, text string) (engine.Compressed, error) {
	return engine.Compressed{Summary: "summary", Kind: engine.SummarySemantic}, nil
}

func (g *gatedEnricher) Profile(ctx context.Context, extractive string) (string, error) {
	g.mu.Lock()
	g.profiles++
	n := g.profiles
	g.mu.Unlock()
	wait := g.release
	if n > 1 {
		wait = nil
	}
	select {
	case <-wait:
	case <-time.After(300 * time.Millisecond):
		if n == 1 {
			return "", fmt.Errorf("%w: first profile not released", engine.ErrModelOutput)
		}
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return fmt.Sprintf("profile %d", n), nil
}

func (g *gatedEnricher) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.profiles
}

// TestWaitEnrichedWaitsForProfile: the persona profile is part of the
// enrichment. When the drift gate fired while the worker was away from
// its profile check, WaitEnriched returned on the empty record queue
// while the worker was still writing the profile (the real-Ollama test
// then saw no profile step at all).
func TestWaitEnrichedWaitsForProfile(t *testing.T) {
	g := &gatedEnricher{release: make(chan struct{})}
	o := testOptions(&fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)})
	o.Enricher, o.Mode = g, engine.ModeTiered
	o.EnrichTimeout = 5 * time.Second
	o.Persona.GateOff = true // every admission fires the gate
	e, err := engine.Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	remember(t, e, engine.Input{Text: "I am vegetarian and I run marathons"})
	// The worker writes the first profile and waits in it; the second
	// record fires the gate meanwhile.
	for deadline := time.Now().Add(5 * time.Second); g.count() < 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no first profile after 5s")
		}
	}
	remember(t, e, engine.Input{Text: "I moved to Lisbon in March"})
	close(g.release)
	waitEnriched(t, e)
	s, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if got := step(s, engine.StepProfile); got.Calls != 2 || got.OK != 2 {
		t.Fatalf("profile counters right after WaitEnriched = %+v, want 2 calls, 2 used", got)
	}
	if text, src := e.PersonaProfile(); src != engine.ProfileLLM || text != "profile 2" {
		t.Fatalf("profile right after WaitEnriched = %q (%s), want the second one", text, src)
	}
}
