package client

import "errors"

// Sentinel errors.
var (
	ErrNoDaemon = errors.New("client: no hmo daemon answers")
)
