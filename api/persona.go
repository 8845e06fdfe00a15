package api

import "context"

// PersonaResponse is the persona's text profile: who the memories are
// about, built from them. Profile is empty in flat mode and before the
// persona's first update.
type PersonaResponse struct {
	Profile string `json:"profile"`
	// Source is how the profile was made: "llm" (written by the local
	// model at the last gate firing) or "extractive" (the persona's
	// salient terms and statements); empty with no profile.
	Source string `json:"source,omitempty"`
}

// PersonaSource is a Service that can also describe the persona. It is an
// interface of its own so that Service stays the memory operations.
type PersonaSource interface {
	Persona(ctx context.Context) (PersonaResponse, error)
}

var _ PersonaSource = (*Local)(nil)

// Persona returns the persona's profile.
func (l *Local) Persona(context.Context) (PersonaResponse, error) {
	text, source := l.e.PersonaProfile()
	return PersonaResponse{Profile: text, Source: source}, nil
}
