package ollama

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/localllm/internal/textcut"
)

// Defaults for ReflectiveOptions.
const (
	DefaultReflectTimeout = 15 * time.Second // bound on one self-reflection
	DefaultReflectResults = 8                // results shown to the model
	DefaultReflectRunes   = 400              // runes of each result shown
)

// ReflectiveOptions configure a Reflective sufficiency test. Zero values
// mean the defaults.
type ReflectiveOptions struct {
	// Model is the Ollama chat model. Required.
	Model string
	// Fallback decides when the model cannot. Default
	// engine.ScoreTest{} (lexical coverage).
	Fallback engine.Sufficiency
	// Timeout bounds one self-reflection. Default DefaultReflectTimeout.
	Timeout time.Duration
	// Results is how many results are shown to the model. Default DefaultReflectResults.
	Results int
	// ResultRunes is how much of each result is shown. Default DefaultReflectRunes.
	ResultRunes int
}

var (
	_ engine.Sufficiency  = (*Reflective)(nil)
	_ engine.StepReporter = (*Reflective)(nil)
)

// Reflective is the Tier-1 sufficiency self-reflection of HMO section 3.2:
// the model reads the query and the tier's results and answers "[ANSWER]"
// or the trigger token "[RETRIEVE]", which sends the walk to the next
// tier. On any model failure (server down, missing model, invalid answer,
// timeout) it asks its fallback instead and counts the fallback. It is
// safe for concurrent use.
type Reflective struct {
	c    *Ollama
	opts ReflectiveOptions

	mu    sync.Mutex // guards stats
	stats engine.StepStats
}

// NewReflective returns the self-reflection with a chat model on c.
func NewReflective(c *Ollama, opts *ReflectiveOptions) (*Reflective, error) {
	o := ReflectiveOptions{}
	if opts != nil {
		o = *opts
	}
	o.Model = strings.TrimSpace(o.Model)
	if o.Model == "" || c == nil {
		return nil, fmt.Errorf("%w: reflection needs a client and a chat model", ErrOptions)
	}
	if o.Fallback == nil {
		o.Fallback = engine.ScoreTest{}
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultReflectTimeout
	}
	setDefaultInt(&o.Results, DefaultReflectResults)
	setDefaultInt(&o.ResultRunes, DefaultReflectRunes)
	if o.Timeout < 0 || o.Results < 1 || o.ResultRunes < 1 {
		return nil, fmt.Errorf("%w: reflection sizes must be positive", ErrOptions)
	}
	return &Reflective{c: c, opts: o, stats: engine.StepStats{Step: engine.StepSufficiency}}, nil
}

// Sufficient implements engine.Sufficiency.
func (r *Reflective) Sufficient(ctx context.Context, q *engine.Query, tier uint8, res []engine.Result) (bool, error) {
	if len(res) == 0 {
		return false, nil // nothing to read: the walk goes on without asking
	}
	ok, err := r.reflect(ctx, q, res)
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	r.count(err)
	if err != nil {
		return r.opts.Fallback.Sufficient(ctx, q, tier, res)
	}
	return ok, nil
}

func (r *Reflective) reflect(ctx context.Context, q *engine.Query, res []engine.Result) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	var b strings.Builder
	for i, x := range res[:min(len(res), r.opts.Results)] {
		text := x.Record.Text
		if c := textcut.CutWords(text, r.opts.ResultRunes); c != "" {
			text = c
		}
		fmt.Fprintf(&b, "%d. ", i+1)
		if x.Record.Role != "" {
			b.WriteString(x.Record.Role + ": ")
		}
		b.WriteString(strings.Join(strings.Fields(text), " "))
		b.WriteByte('\n')
	}
	var ans struct {
		Decision string `json:"decision"`
	}
	user := fmt.Sprintf(sufficiencyUser, q.Text, b.String())
	if err := r.c.chatJSON(ctx, r.opts.Model, "sufficiency", sufficiencySystem, user, sufficiencySchema, 16, &ans); err != nil {
		return false, err
	}
	switch strings.ToUpper(strings.TrimSpace(ans.Decision)) {
	case answerToken:
		return true, nil
	case TriggerToken:
		return false, nil
	}
	return false, fmt.Errorf("%w: sufficiency: decision %q", engine.ErrModelOutput, clip(ans.Decision))
}

func (r *Reflective) count(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Calls++
	if err == nil {
		r.stats.OK++
		return
	}
	r.stats.Fallbacks++
	if r.stats.Reasons == nil {
		r.stats.Reasons = map[string]uint64{}
	}
	r.stats.Reasons[engine.FallbackReason(err)]++
}

// StepStats implements engine.StepReporter. The counters live in the
// process.
func (r *Reflective) StepStats() []engine.StepStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Reasons = make(map[string]uint64, len(r.stats.Reasons))
	for k, v := range r.stats.Reasons {
		s.Reasons[k] = v
	}
	return []engine.StepStats{s}
}
