package ui

import (
	"context"
	"time"

	"github.com/hmo-dev/hmo/engine"
	"github.com/hmo-dev/hmo/persona"
)

// Persona is what the persona page shows.
type Persona struct {
	// Enabled is false when the store has no persona (flat mode).
	Enabled    bool               `json:"enabled"`
	Updates    int                `json:"updates"`      // records the persona has observed
	Firings    int                `json:"gate_firings"` // drift-gate firings, the first update included
	Drift      float64            `json:"drift"`        // 1 − cosine to the anchor
	AnchorTime time.Time          `json:"anchor_time,omitzero"`
	Profile    persona.Profile    `json:"profile"`
	Text       string             `json:"text,omitempty"`   // the profile as agents get it
	Source     string             `json:"source,omitempty"` // engine.ProfileLLM or engine.ProfileExtractive
	History    []persona.Snapshot `json:"history"`
}

// PersonaFunc describes the persona. It must be safe for concurrent use.
type PersonaFunc func(context.Context) (Persona, error)

// EnginePersona describes the persona of e.
func EnginePersona(e *engine.Engine) PersonaFunc {
	return func(context.Context) (Persona, error) {
		p := e.Persona()
		if p == nil {
			return Persona{History: []persona.Snapshot{}}, nil
		}
		text, source := e.PersonaProfile()
		return Persona{
			Enabled: true, Updates: p.Updates(), Firings: p.Firings(), Drift: p.Drift(),
			AnchorTime: p.AnchorTime(), Profile: p.Profile(), Text: text, Source: source, History: p.History(),
		}, nil
	}
}

// persona serves the persona page's data.
func (h *Handler) persona(ctx context.Context, _ struct{}) (Persona, error) {
	if h.opts.Persona == nil {
		return Persona{History: []persona.Snapshot{}}, nil
	}
	return h.opts.Persona(ctx)
}
