package ollama

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/hmo-dev/hmo/engine"
)

// Defaults for Options.
const (
	DefaultHost            = "http://127.0.0.1:11434"
	DefaultChatModel       = "qwen2.5:3b"       // documented default for --chat-model; LLM steps are off unless one is configured
	DefaultEmbedModel      = "nomic-embed-text" // model of "ollama" without ":model"
	DefaultCallTimeout     = 30 * time.Second   // one HTTP call, retries excluded
	DefaultRetries         = 2                  // extra attempts after a failed call
	DefaultBackoff         = 250 * time.Millisecond
	DefaultBreakerFailures = 3                // consecutive failures that open the breaker
	DefaultBreakerCooldown = 30 * time.Second // how long an open breaker refuses calls
	DefaultEmbedBatch      = 32               // texts per /api/embed request
)

// EnvHost is the environment variable Ollama itself reads for its address.
const EnvHost = "OLLAMA_HOST"

// Options configure an Ollama client. Zero values mean the defaults.
type Options struct {
	// Host is the server address, "http://host:port", "host:port" or
	// "host". Default: $OLLAMA_HOST, else DefaultHost.
	Host string
	// CallTimeout bounds one HTTP call. Default DefaultCallTimeout.
	CallTimeout time.Duration
	// Retries is the number of extra attempts after a failed call that may
	// succeed on retry (unreachable server, 5xx, timeout). -1 means none.
	// Default DefaultRetries.
	Retries int
	// Backoff is the wait before the first retry; it doubles with each
	// retry. Default DefaultBackoff.
	Backoff time.Duration
	// BreakerFailures is the number of consecutive failed calls after
	// which the client stops calling the server. Default DefaultBreakerFailures.
	BreakerFailures int
	// BreakerCooldown is how long the breaker stays open before one trial
	// call is let through. Default DefaultBreakerCooldown.
	BreakerCooldown time.Duration
	// Clock gives the current time (breaker). Default time.Now.
	Clock func() time.Time
	// Sleep waits between retries; it returns early with ctx's error.
	// Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// HTTPClient sends the requests. Default: a client without timeout
	// (CallTimeout bounds each call through its context).
	HTTPClient *http.Client
}

// Ollama is a client of a local Ollama server over its Go API, with
// per-call timeouts, bounded retries with exponential backoff and a
// circuit breaker. It is safe for concurrent use.
type Ollama struct {
	opts Options
	base *url.URL
	api  *api.Client
	br   breaker
}

// New returns a client. It does not contact the server.
func New(opts *Options) (*Ollama, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Host == "" {
		o.Host = os.Getenv(EnvHost)
	}
	base, err := ParseHost(o.Host)
	if err != nil {
		return nil, err
	}
	o.Host = base.String()
	if o.CallTimeout == 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	switch {
	case o.Retries == 0:
		o.Retries = DefaultRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	if o.Backoff == 0 {
		o.Backoff = DefaultBackoff
	}
	if o.BreakerFailures == 0 {
		o.BreakerFailures = DefaultBreakerFailures
	}
	if o.BreakerCooldown == 0 {
		o.BreakerCooldown = DefaultBreakerCooldown
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.CallTimeout < 0 || o.Backoff < 0 || o.BreakerFailures < 0 || o.BreakerCooldown < 0 {
		return nil, fmt.Errorf("%w: negative duration or count", ErrOptions)
	}
	c := &Ollama{opts: o, base: base, api: api.NewClient(base, o.HTTPClient)}
	c.br = breaker{failures: o.BreakerFailures, cooldown: o.BreakerCooldown, clock: o.Clock}
	return c, nil
}

// ParseHost turns an OLLAMA_HOST value into a base URL: scheme http and
// port 11434 unless given; empty means DefaultHost.
func ParseHost(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		s = DefaultHost
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("%w: host %q", ErrOptions, s)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), "11434")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

// Host is the server's base URL.
func (c *Ollama) Host() string { return c.opts.Host }

// Breaker reports the breaker's state.
func (c *Ollama) Breaker() BreakerState { return c.br.state() }

// Version asks the server for its version: the health check.
func (c *Ollama) Version(ctx context.Context) (string, error) {
	var v string
	err := c.call(ctx, "version", func(ctx context.Context) error {
		var err error
		v, err = c.api.Version(ctx)
		return err
	})
	return v, err
}

// Models lists the models the server has.
func (c *Ollama) Models(ctx context.Context) ([]string, error) {
	var names []string
	err := c.call(ctx, "list models", func(ctx context.Context) error {
		lr, err := c.api.List(ctx)
		if err != nil {
			return err
		}
		names = names[:0]
		for _, m := range lr.Models {
			names = append(names, m.Name)
		}
		return nil
	})
	return names, err
}

// HasModel reports whether the server has model ("name" matches
// "name:latest").
func (c *Ollama) HasModel(ctx context.Context, model string) (bool, error) {
	names, err := c.Models(ctx)
	if err != nil {
		return false, err
	}
	for _, n := range names {
		if n == model || n == model+":latest" || strings.TrimSuffix(n, ":latest") == model {
			return true, nil
		}
	}
	return false, nil
}

// call runs fn with the per-call timeout, retrying what may succeed on
// retry, through the breaker. Errors wrap engine.ErrModelUnavailable,
// engine.ErrModelNotFound or context.DeadlineExceeded.
func (c *Ollama) call(ctx context.Context, what string, fn func(context.Context) error) error {
	var err error
	for attempt := 0; ; attempt++ {
		if !c.br.allow() {
			return fmt.Errorf("%w: %s: %s (breaker open after repeated failures; retrying after %s)",
				engine.ErrModelUnavailable, what, c.opts.Host, c.opts.BreakerCooldown)
		}
		cctx, cancel := context.WithTimeout(ctx, c.opts.CallTimeout)
		err = fn(cctx)
		cancel()
		err = classifyErr(ctx, err, what, c.opts.Host)
		c.br.record(err)
		if err == nil || !retryable(err) || attempt >= c.opts.Retries || ctx.Err() != nil {
			return err
		}
		if serr := c.opts.Sleep(ctx, c.opts.Backoff<<attempt); serr != nil {
			return err
		}
	}
}

// classifyErr maps transport and API errors to the engine's sentinels.
func classifyErr(ctx context.Context, err error, what, host string) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	var se api.StatusError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return fmt.Errorf("%w: %s: %s did not answer in time: %w", engine.ErrModelUnavailable, what, host, context.DeadlineExceeded)
	case errors.As(err, &se) && se.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%w: %s: %s", engine.ErrModelNotFound, what, se.ErrorMessage)
	case errors.As(err, &se) && se.StatusCode >= 500:
		return fmt.Errorf("%w: %s: server error %d: %s", engine.ErrModelUnavailable, what, se.StatusCode, se.ErrorMessage)
	case errors.As(err, &se):
		return fmt.Errorf("%w: %s: %s", engine.ErrModelOutput, what, se.Error())
	case isJSONError(err):
		return fmt.Errorf("%w: %s: malformed answer: %v", engine.ErrModelOutput, what, err)
	case errors.Is(err, engine.ErrModelOutput):
		return err
	}
	return fmt.Errorf("%w: %s: %s: %v", engine.ErrModelUnavailable, what, host, err)
}

// retryable reports whether another attempt may succeed: the server was
// unreachable, failed, or was slow; not a missing model or bad output.
func retryable(err error) bool {
	return errors.Is(err, engine.ErrModelUnavailable)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isJSONError(err error) bool {
	var se interface{ Offset() int64 }
	msg := err.Error()
	return errors.As(err, &se) || strings.Contains(msg, "invalid character") || strings.Contains(msg, "unexpected end of JSON") ||
		strings.Contains(msg, "cannot unmarshal")
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// BreakerState is the circuit breaker's state.
type BreakerState struct {
	Open     bool      `json:"open"`
	Failures int       `json:"failures"`       // consecutive failures
	Until    time.Time `json:"until,omitzero"` // when an open breaker lets a trial call through
	LastErr  string    `json:"last_error,omitempty"`
}

// breaker stops calls to a server that failed BreakerFailures times in a
// row, for BreakerCooldown; then one trial call decides.
type breaker struct {
	failures int
	cooldown time.Duration
	clock    func() time.Time

	mu      sync.Mutex // guards the fields below
	fails   int
	until   time.Time // zero: closed
	trial   bool      // a trial call is in flight
	lastErr string
}

func (b *breaker) allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.until.IsZero() {
		return true
	}
	if b.clock().Before(b.until) || b.trial {
		return false
	}
	b.trial = true
	return true
}

// record counts a call's outcome. Only failures that say the server is
// down or failing count; a missing model or bad output does not.
func (b *breaker) record(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.trial = false
	if err == nil || !errors.Is(err, engine.ErrModelUnavailable) {
		if err == nil || errors.Is(err, engine.ErrModelNotFound) || errors.Is(err, engine.ErrModelOutput) {
			b.fails, b.until = 0, time.Time{}
		}
		return
	}
	b.fails++
	b.lastErr = err.Error()
	if b.fails >= b.failures {
		b.until = b.clock().Add(b.cooldown)
	}
}

func (b *breaker) state() BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BreakerState{Open: !b.until.IsZero(), Failures: b.fails, Until: b.until, LastErr: b.lastErr}
}
