package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	bucketEnrich   = []byte("enrich")      // id -> nil: records committed but not yet enriched
	metaSteps      = []byte("llm_steps")   // JSON []StepStats of the enrichment steps
	metaProfileLLM = []byte("profile_llm") // JSON llmProfile: the persona profile written by the Enricher
)

// Enrichment step names, as reported in StepStats.
const (
	StepImportance  = "importance"
	StepCompression = "compression"
	StepProfile     = "profile"
	StepSufficiency = "sufficiency"
)

// enrichBatch is how many queued ids the worker reads at once.
const enrichBatch = 64

// enrichRetry is how long the worker waits after a store error before it
// tries the queue again.
const enrichRetry = time.Second

// enricher is the state of the enrichment worker. The worker goroutine is
// started by Open and cancelled and waited for by Close.
type enricher struct {
	wake   chan struct{} // capacity 1: work may be queued
	cancel context.CancelFunc
	done   chan struct{} // closed when the worker returns

	mu         sync.Mutex // guards the fields below
	steps      map[string]*StepStats
	lastErr    string // last store error of the worker
	profileDue bool   // the drift gate fired since the last profile refresh
	profileRun bool   // the worker is refreshing the profile (drain)
}

// llmProfile is the persona profile the Enricher wrote, for the gate
// firing count it was written at.
type llmProfile struct {
	Text    string    `json:"text"`
	Firings int       `json:"firings"`
	Time    time.Time `json:"time"`
}

// startEnricher loads the step counters and starts the worker, when an
// Enricher is configured.
func (e *Engine) startEnricher() error {
	if e.opts.Enricher == nil {
		return nil
	}
	en := &enricher{wake: make(chan struct{}, 1), done: make(chan struct{}), steps: map[string]*StepStats{}}
	err := e.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketMeta).Get(metaSteps); b != nil {
			var list []StepStats
			if err := json.Unmarshal(b, &list); err != nil {
				return fmt.Errorf("%w: step counters: %v", ErrCorrupt, err)
			}
			for i := range list {
				en.steps[list[i].Step] = &list[i]
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if p := e.Persona(); p != nil && p.Firings() > e.storedProfile().Firings {
		en.profileDue = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	en.cancel = cancel
	e.enr = en
	go e.enrichLoop(ctx)
	en.signal()
	return nil
}

// stopEnricher cancels the worker and waits for it. Records it did not
// reach stay queued for the next open.
func (e *Engine) stopEnricher() {
	if e.enr == nil {
		return
	}
	e.enr.cancel()
	<-e.enr.done
}

func (en *enricher) signal() {
	select {
	case en.wake <- struct{}{}:
	default:
	}
}

// enqueue queues records for enrichment in the committing transaction.
func (e *Engine) enqueue(tx *bolt.Tx, ids []uint64) error {
	if e.opts.Enricher == nil {
		return nil
	}
	b := tx.Bucket(bucketEnrich)
	for _, id := range ids {
		if err := b.Put(u64key(id), nil); err != nil {
			return err
		}
	}
	return nil
}

// profileFired tells the worker that the drift gate fired: the persona
// profile is due for a refresh. Safe to call with any lock held.
func (e *Engine) profileFired() {
	if e.enr == nil {
		return
	}
	e.enr.mu.Lock()
	e.enr.profileDue = true
	e.enr.mu.Unlock()
	e.enr.signal()
}

func (e *Engine) enrichLoop(ctx context.Context) {
	defer close(e.enr.done)
	for {
		wait := e.drain(ctx)
		var retry <-chan time.Time
		if wait {
			retry = time.After(enrichRetry)
		}
		select {
		case <-ctx.Done():
			return
		case <-e.enr.wake:
		case <-retry:
		}
	}
}

// drain enriches queued records until the queue is empty, the engine
// closes, or the store fails (then it returns true: wait and retry).
func (e *Engine) drain(ctx context.Context) bool {
	for ctx.Err() == nil {
		if e.takeProfileDue() {
			err := e.refreshProfile(ctx)
			e.enr.mu.Lock()
			e.enr.profileRun = false
			e.enr.mu.Unlock()
			if err != nil {
				return e.workerFailed(err)
			}
		}
		ids, err := e.queued()
		if err != nil {
			return e.workerFailed(err)
		}
		if len(ids) == 0 {
			return false
		}
		for _, id := range ids {
			if ctx.Err() != nil {
				return false
			}
			if err := e.enrichOne(ctx, id); err != nil {
				return e.workerFailed(err)
			}
		}
	}
	return false
}

func (e *Engine) workerFailed(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, ErrClosed) {
		return false
	}
	e.enr.mu.Lock()
	e.enr.lastErr = err.Error()
	e.enr.mu.Unlock()
	return true
}

func (e *Engine) takeProfileDue() bool {
	e.enr.mu.Lock()
	defer e.enr.mu.Unlock()
	due := e.enr.profileDue && e.tiers != nil
	e.enr.profileDue = false
	e.enr.profileRun = due
	return due
}

// profilePending reports whether a profile refresh is due or running.
func (e *Engine) profilePending() bool {
	e.enr.mu.Lock()
	defer e.enr.mu.Unlock()
	return e.enr.profileRun || e.enr.profileDue && e.tiers != nil
}

// queued returns up to enrichBatch ids waiting for enrichment.
func (e *Engine) queued() ([]uint64, error) {
	var ids []uint64
	err := e.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketEnrich).Cursor()
		for k, _ := c.First(); k != nil && len(ids) < enrichBatch; k, _ = c.Next() {
			ids = append(ids, keyU64(k))
		}
		return nil
	})
	return ids, err
}

// outcome is what the language-model steps gave for one record.
type outcome struct {
	i0         float64
	i0OK       bool
	summary    Compressed
	summarized bool
	counts     map[string]error // step -> error (nil: the model's answer was used)
}

// enrichOne runs the language-model steps of one record outside every
// lock, then stores their results and dequeues it in one transaction.
// Enrichment overwrites what a previous run wrote, so running it twice
// (a crash after the model answered, before the commit) is harmless.
func (e *Engine) enrichOne(ctx context.Context, id uint64) error {
	var r Record
	err := e.db.View(func(tx *bolt.Tx) error {
		var err error
		r, err = getRecord(tx, id)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return e.dequeue(id, nil)
	}
	if err != nil {
		return err
	}
	out := e.runSteps(ctx, &r)
	if ctx.Err() != nil {
		return nil // closing: the record stays queued
	}
	return e.dequeue(id, out)
}

func (e *Engine) runSteps(ctx context.Context, r *Record) *outcome {
	sctx, cancel := context.WithTimeout(ctx, e.opts.EnrichTimeout)
	defer cancel()
	out := &outcome{counts: map[string]error{}}
	profile, _ := e.PersonaProfile()
	i0, err := e.opts.Enricher.Importance(sctx, r.Text, profile)
	if err == nil && (i0 < 1 || i0 > 10 || math.IsNaN(i0)) {
		err = fmt.Errorf("%w: importance %v outside [1, 10]", ErrModelOutput, i0)
	}
	out.i0, out.i0OK, out.counts[StepImportance] = i0, err == nil, err
	if !e.complex(r.Text) {
		return out
	}
	c, err := e.opts.Enricher.Compress(sctx, r.Text)
	if err == nil && strings.TrimSpace(c.Summary) == "" {
		err = fmt.Errorf("%w: empty summary", ErrModelOutput)
	}
	out.counts[StepCompression] = err
	if err == nil {
		out.summary, out.summarized = c, true
	} else if e.opts.Summarize != nil {
		out.summary = Compressed{Summary: e.opts.Summarize(r.Text, DefaultSummaryRunes), Kind: SummaryExtractive}
		out.summarized = out.summary.Summary != ""
	}
	return out
}

// complex reports whether text is long or complex enough for a compressed
// representation (HMO Eq. 2).
func (e *Engine) complex(text string) bool {
	return len(text) > e.opts.SummarizeAbove || strings.Count(text, "\n")+1 >= DefaultSummarizeLines
}

// dequeue stores an outcome (nil: the record is gone), removes the id
// from the queue, and re-ranks the record in the tiers, all under one
// hold of wmu: WaitEnriched, which sees the queue empty once the first
// step commits, takes wmu before it returns, so that a Get after it
// reads the new importance from the tiers too.
func (e *Engine) dequeue(id uint64, out *outcome) error {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	stored, err := e.storeOutcome(id, out)
	if err != nil || !stored || !out.i0OK {
		return err
	}
	return e.reweigh(id, out.i0)
}

// storeOutcome is dequeue's first step. wmu is held.
func (e *Engine) storeOutcome(id uint64, out *outcome) (bool, error) {
	if err := e.checkOpen(); err != nil {
		return false, err
	}
	stored := false
	err := e.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketEnrich).Delete(u64key(id)); err != nil {
			return err
		}
		if out == nil {
			return nil
		}
		r, err := getRecord(tx, id)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if out.i0OK {
			r.Header.I0 = out.i0
		}
		if out.summarized {
			r.Summary, r.SummaryKind = out.summary.Summary, out.summary.Kind
		}
		if err := putRecord(tx, &r, e.opts.CompressAbove); err != nil {
			return err
		}
		stored = true
		return e.countSteps(tx, out.counts)
	})
	return stored, err
}

// countSteps adds a record's step outcomes to the counters and persists
// them in tx.
func (e *Engine) countSteps(tx *bolt.Tx, counts map[string]error) error {
	en := e.enr
	en.mu.Lock()
	for step, err := range counts {
		s := en.steps[step]
		if s == nil {
			s = &StepStats{Step: step}
			en.steps[step] = s
		}
		s.Calls++
		if err == nil {
			s.OK++
			continue
		}
		s.Fallbacks++
		if s.Reasons == nil {
			s.Reasons = map[string]uint64{}
		}
		s.Reasons[FallbackReason(err)]++
	}
	list := en.stepList()
	en.mu.Unlock()
	b, err := json.Marshal(list)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketMeta).Put(metaSteps, b)
}

// stepList copies the counters, in step order. en.mu is held.
func (en *enricher) stepList() []StepStats {
	var out []StepStats
	for _, name := range []string{StepImportance, StepCompression, StepProfile} {
		if s := en.steps[name]; s != nil {
			c := *s
			c.Reasons = make(map[string]uint64, len(s.Reasons))
			for k, v := range s.Reasons {
				c.Reasons[k] = v
			}
			out = append(out, c)
		}
	}
	return out
}

// FallbackReason names why a language-model step fell back, for the
// counters: "timeout", "model not found", "invalid output", "unavailable"
// or "error".
func FallbackReason(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, ErrModelNotFound):
		return "model not found"
	case errors.Is(err, ErrModelOutput):
		return "invalid output"
	case errors.Is(err, ErrModelUnavailable):
		return "unavailable"
	}
	return "error"
}

// WaitEnriched blocks until every committed record has been enriched, and
// the persona profile rewritten if the drift gate fired, or until ctx is
// done, and returns ctx's error then. Without an Enricher it
// returns at once. Records not enriched when it gives up stay queued: the
// worker goes on, and a later Open resumes.
func (e *Engine) WaitEnriched(ctx context.Context) error {
	if e.enr == nil {
		return nil
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if err := e.checkOpen(); err != nil {
			return err
		}
		n, err := e.enrichPending()
		if err != nil {
			return err
		}
		if n == 0 && !e.profilePending() {
			// The last outcome may be committed and its tier entry not
			// yet re-ranked (dequeue): wait for dequeue to let go.
			e.wmu.Lock()
			//lint:ignore SA2001 a barrier: dequeue holds wmu through both steps
			e.wmu.Unlock()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (e *Engine) enrichPending() (int, error) {
	n := 0
	err := e.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketEnrich).Stats().KeyN
		return nil
	})
	return n, err
}

// stepStats returns the enrichment counters and those of a reporting
// Sufficiency.
func (e *Engine) stepStats() (steps []StepStats, lastErr string) {
	if e.enr != nil {
		e.enr.mu.Lock()
		steps, lastErr = e.enr.stepList(), e.enr.lastErr
		e.enr.mu.Unlock()
	} else {
		// Counters of earlier runs with a model stay reported.
		e.db.View(func(tx *bolt.Tx) error {
			if b := tx.Bucket(bucketMeta).Get(metaSteps); b != nil {
				json.Unmarshal(b, &steps) // unreadable counters report as none
			}
			return nil
		})
	}
	if r, ok := e.opts.Sufficiency.(StepReporter); ok {
		steps = append(steps, r.StepStats()...)
	}
	return steps, lastErr
}

// enrichStats fills the language-model part of s.
func (e *Engine) enrichStats(s *Stats) error {
	s.LLM = e.opts.Enricher != nil
	s.Steps, s.EnrichError = e.stepStats()
	_, s.Profile = e.PersonaProfile()
	if !s.LLM {
		return nil
	}
	n, err := e.enrichPending()
	s.EnrichPending = n
	return err
}
