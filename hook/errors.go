package hook

import "errors"

// Sentinel errors.
var (
	ErrUnknownEvent = errors.New("hook: unknown event")
	ErrPayload      = errors.New("hook: malformed payload")
	ErrBusy         = errors.New("hook: transcript is being ingested by another hook")
	ErrOption       = errors.New("hook: invalid option")
	ErrTranscript   = errors.New("hook: refused transcript path")
	ErrDeadline     = errors.New("hook: gave up at its deadline")
)
