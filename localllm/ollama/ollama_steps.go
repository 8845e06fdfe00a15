package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/ollama/ollama/api"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/localllm/internal/textcut"
)

// Defaults for StepsOptions.
const (
	DefaultSummaryRunes = 600  // longest accepted compressed representation
	DefaultProfileRunes = 1200 // longest accepted persona profile
	DefaultPromptRunes  = 6000 // longest record text sent to the model; longer text is cut
	DefaultMaxTokens    = 256  // tokens a step may generate
)

// StepsOptions configure the language-model steps. Zero values mean the
// defaults.
type StepsOptions struct {
	// Model is the Ollama chat model. Required.
	Model string
	// SummaryRunes is the longest accepted summary; a longer one is cut
	// at a word. Default DefaultSummaryRunes.
	SummaryRunes int
	// ProfileRunes is the longest accepted profile; a longer one is cut
	// at a word. Default DefaultProfileRunes.
	ProfileRunes int
	// PromptRunes is the longest record text put in a prompt. Default
	// DefaultPromptRunes.
	PromptRunes int
	// MaxTokens bounds the tokens a step generates. Default DefaultMaxTokens.
	MaxTokens int
}

var _ engine.Enricher = (*Steps)(nil)

// Steps runs the LLM steps of ingestion and persona upkeep with an
// Ollama chat model, asking for JSON (constrained by a schema), and
// validates and clamps every answer. Errors wrap engine.ErrModelOutput
// for answers that fail validation; the engine then uses its embedded
// default. It is safe for concurrent use.
type Steps struct {
	c    *Ollama
	opts StepsOptions
}

// NewSteps returns the steps for a chat model on c. It does not
// contact the server.
func NewSteps(c *Ollama, opts *StepsOptions) (*Steps, error) {
	o := StepsOptions{}
	if opts != nil {
		o = *opts
	}
	o.Model = strings.TrimSpace(o.Model)
	if o.Model == "" || c == nil {
		return nil, fmt.Errorf("%w: steps need a client and a chat model", ErrOptions)
	}
	setDefaultInt(&o.SummaryRunes, DefaultSummaryRunes)
	setDefaultInt(&o.ProfileRunes, DefaultProfileRunes)
	setDefaultInt(&o.PromptRunes, DefaultPromptRunes)
	setDefaultInt(&o.MaxTokens, DefaultMaxTokens)
	if o.SummaryRunes < 0 || o.ProfileRunes < 0 || o.PromptRunes < 0 || o.MaxTokens < 0 {
		return nil, fmt.Errorf("%w: negative size", ErrOptions)
	}
	return &Steps{c: c, opts: o}, nil
}

func setDefaultInt(v *int, def int) {
	if *v == 0 {
		*v = def
	}
}

// Model is the chat model.
func (s *Steps) Model() string { return s.opts.Model }

// Importance implements engine.Enricher: the paper's Appendix A rubric.
// The answer must be JSON {"score": n} with n on [0, 10]; it is rounded
// and clamped to [1, 10].
func (s *Steps) Importance(ctx context.Context, text, profile string) (float64, error) {
	if strings.TrimSpace(profile) == "" {
		profile = "(no profile yet)"
	}
	user := fmt.Sprintf(importanceUser, s.cut(profile), s.cut(text))
	var ans struct {
		Score *float64 `json:"score"`
	}
	if err := s.chat(ctx, "importance", importanceSystem, user, importanceSchema, &ans); err != nil {
		return 0, err
	}
	return ParseScore(ans.Score)
}

// ParseScore validates an importance score: present, finite, on [0, 10];
// it is rounded and clamped to [1, 10].
func ParseScore(v *float64) (float64, error) {
	switch {
	case v == nil:
		return 0, fmt.Errorf("%w: importance: no score", engine.ErrModelOutput)
	case math.IsNaN(*v) || *v < 0 || *v > 10:
		return 0, fmt.Errorf("%w: importance: score %v outside [1, 10]", engine.ErrModelOutput, *v)
	}
	return min(max(math.Round(*v), 1), 10), nil
}

// Compress implements engine.Enricher (HMO Eq. 2). The answer must be
// JSON {"kind": "semantic"|"episodic"|"core", "summary": "..."} with a
// non-empty summary shorter than the text; it is cut to SummaryRunes.
func (s *Steps) Compress(ctx context.Context, text string) (engine.Compressed, error) {
	var ans struct {
		Kind    string `json:"kind"`
		Summary string `json:"summary"`
	}
	sys := fmt.Sprintf(compressSystem, s.opts.SummaryRunes)
	if err := s.chat(ctx, "compress", sys, s.cut(text), compressSchema, &ans); err != nil {
		return engine.Compressed{}, err
	}
	return ParseCompressed(ans.Kind, ans.Summary, text, s.opts.SummaryRunes)
}

// ParseCompressed validates a compressed representation of text.
func ParseCompressed(kind, summary, text string, maxRunes int) (engine.Compressed, error) {
	kind = strings.ToLower(strings.TrimSpace(kind))
	switch kind {
	case engine.SummarySemantic, engine.SummaryEpisodic, engine.SummaryCore:
	default:
		return engine.Compressed{}, fmt.Errorf("%w: compress: kind %q", engine.ErrModelOutput, kind)
	}
	summary = strings.Join(strings.Fields(summary), " ")
	switch {
	case summary == "":
		return engine.Compressed{}, fmt.Errorf("%w: compress: empty summary", engine.ErrModelOutput)
	case !utf8.ValidString(summary) || strings.ContainsRune(summary, utf8.RuneError):
		return engine.Compressed{}, fmt.Errorf("%w: compress: summary is not valid UTF-8", engine.ErrModelOutput)
	case len(summary) >= len(text):
		return engine.Compressed{}, fmt.Errorf("%w: compress: summary (%d bytes) no shorter than the text (%d)", engine.ErrModelOutput, len(summary), len(text))
	}
	if c := textcut.CutWords(summary, maxRunes); c != "" {
		summary = c
	}
	return engine.Compressed{Summary: summary, Kind: kind}, nil
}

// Profile implements engine.Enricher: the persona profile, from the
// extractive one. The answer must be JSON {"profile": "..."}, non-empty;
// it is cut to ProfileRunes.
func (s *Steps) Profile(ctx context.Context, extractive string) (string, error) {
	if strings.TrimSpace(extractive) == "" {
		return "", fmt.Errorf("%w: profile: nothing to describe yet", engine.ErrModelOutput)
	}
	var ans struct {
		Profile string `json:"profile"`
	}
	sys := fmt.Sprintf(profileSystem, s.opts.ProfileRunes)
	if err := s.chat(ctx, "profile", sys, s.cut(extractive), profileSchema, &ans); err != nil {
		return "", err
	}
	p := strings.TrimSpace(ans.Profile)
	if p == "" || !utf8.ValidString(p) || strings.ContainsRune(p, utf8.RuneError) {
		return "", fmt.Errorf("%w: profile: empty or not valid UTF-8", engine.ErrModelOutput)
	}
	if c := textcut.CutWords(p, s.opts.ProfileRunes); c != "" {
		p = c
	}
	return p, nil
}

// cut shortens text for a prompt.
func (s *Steps) cut(text string) string {
	if c := textcut.CutWords(text, s.opts.PromptRunes); c != "" {
		return c
	}
	return text
}

// chat sends one non-streaming chat request with a JSON schema as format
// and decodes the answer's content into out, strictly: one JSON object,
// no unknown fields.
func (s *Steps) chat(ctx context.Context, step, system, user string, schema []byte, out any) error {
	return s.c.chatJSON(ctx, s.opts.Model, step, system, user, schema, s.opts.MaxTokens, out)
}

func (c *Ollama) chatJSON(ctx context.Context, model, step, system, user string, schema []byte, maxTokens int, out any) error {
	var content strings.Builder
	stream := false
	req := &api.ChatRequest{
		Model:    model,
		Messages: []api.Message{{Role: "system", Content: system}, {Role: "user", Content: user}},
		Stream:   &stream,
		Format:   json.RawMessage(schema),
		Options:  map[string]any{"temperature": 0, "num_predict": maxTokens},
	}
	err := c.call(ctx, step+" with "+model, func(ctx context.Context) error {
		content.Reset()
		return c.api.Chat(ctx, req, func(r api.ChatResponse) error {
			content.WriteString(r.Message.Content)
			return nil
		})
	})
	if err != nil {
		return err
	}
	return DecodeAnswer(content.String(), out)
}

// DecodeAnswer decodes a model's JSON answer into out: exactly one JSON
// object (surrounding white space and a Markdown code fence allowed), no
// unknown fields. Failures wrap engine.ErrModelOutput.
func DecodeAnswer(content string, out any) error {
	s := strings.TrimSpace(content)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "```"))
	}
	if !strings.HasPrefix(s, "{") {
		return fmt.Errorf("%w: not a JSON object: %q", engine.ErrModelOutput, clip(s))
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%w: %v: %q", engine.ErrModelOutput, err, clip(s))
	}
	if dec.More() {
		return fmt.Errorf("%w: text after the JSON object: %q", engine.ErrModelOutput, clip(s))
	}
	return nil
}

// clip shortens a model answer for an error message.
func clip(s string) string {
	const n = 80
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
